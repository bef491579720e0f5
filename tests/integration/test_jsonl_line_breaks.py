"""An `external_id` holding U+2028, U+2029 or U+0085 -- characters JSON lets stand in a
string, and that Python's splitlines, httpx's iter_lines and many editors end a line at --
stays on one line in every JSONL the project writes: the batch results endpoint, the
results file `faithscreen screen` writes, and what the client reads back. On SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from app.cli import cli
from app.json_lines import json_line, json_line_of
from app.settings import get_settings
from faithscreen_client import AsyncClient
from tests.support.batches import (
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    supplied_item,
)
from tests.support.in_process_api import Api

ODD_IDS = ["a\u2028b", "c\u2029d", "e\x85f", "\u2028\u2029\x85"]
RAW_BREAKS = (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xc2\x85")


def one_line_each(body: bytes) -> list[dict[str, object]]:
    """The JSON objects of a JSONL body, checked to be read the same by a reader that
    splits at b"\\n" and by one that splits at every Unicode line break."""
    assert not any(raw in body for raw in RAW_BREAKS), body
    by_newline = body.split(b"\n")
    assert by_newline[-1] == b""
    assert body.decode().splitlines() == [line.decode() for line in by_newline[:-1]]
    return [json.loads(line) for line in by_newline[:-1]]


async def test_batch_results_keep_each_item_on_one_line(idle_api: Api) -> None:
    items = [supplied_item(n, external_id=odd) for n, odd in enumerate(ODD_IDS)]
    batch = await post_batch(idle_api, items)
    response = await idle_api.client.get(f"/v1/batches/{batch['id']}/results")
    assert response.status_code == 200, response.text
    lines = one_line_each(response.content)
    assert [line["external_id"] for line in lines] == ODD_IDS


async def test_the_client_reads_them_back_whole(idle_api: Api) -> None:
    items = [supplied_item(n, external_id=odd) for n, odd in enumerate(ODD_IDS)]
    batch = await post_batch(idle_api, items)
    transport = httpx2.ASGITransport(app=idle_api.app)
    async with AsyncClient("http://127.0.0.1", transport=transport) as client:
        read = [(r.index, r.external_id) async for r in client.batch_results(batch["id"])]
    assert read == list(enumerate(ODD_IDS))


def test_the_results_file_of_screen_keeps_each_item_on_one_line(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", database_url)
    get_settings.cache_clear()
    pairs, out = tmp_path / "pairs.jsonl", tmp_path / "results.jsonl"
    items = [supplied_item(n, external_id=odd) for n, odd in enumerate(ODD_IDS)]
    pairs.write_text("".join(json.dumps(item) + "\n" for item in items))
    try:
        done = CliRunner().invoke(cli, ["screen", str(pairs), "--out", str(out)])
    finally:
        get_settings.cache_clear()
    assert done.exit_code == 0, done.output
    assert [line["external_id"] for line in one_line_each(out.read_bytes())] == ODD_IDS


@given(st.recursive(st.none() | st.text() | st.integers(), lambda inner: st.lists(inner)))
def test_json_line_is_one_line_of_the_same_value(value: object) -> None:
    assert one_line_each(json_line({"value": value})) == [{"value": value}]


def test_json_line_of_escapes_what_another_serialiser_wrote() -> None:
    written = json.dumps({"id": "a\u2028b\x85"}, ensure_ascii=False).encode()
    assert json_line_of(written) == b'{"id": "a\\u2028b\\u0085"}\n'
    assert json.loads(json_line_of(written)) == {"id": "a\u2028b\x85"}
