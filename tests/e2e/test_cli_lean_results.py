"""`faithscreen screen`'s results file says what Lean said of each pair (issue 34): the
`lean_status` of GET /v1/batches/{id}/results, in JSONL and CSV, with a scripted Kimina
(tests/support/scripted_kimina.py) and the scripted provider, on SQLite and PostgreSQL.
A pair with supplied replies is checked too (Lean decides first), here `ok`."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli_batch import faithscreen, pairs_file
from tests.support.batches import queued_item, supplied_item
from tests.support.scripted_kimina import Recorded, ScriptedKimina
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.serve_process import provider_env

pytestmark = pytest.mark.one_database("postgres")

# external id -> lean_status, in file order.
EXPECTED = {"item-1": "ok", "item-2": "error", "item-3": "ok"}


@pytest.fixture
def kimina() -> Iterator[ScriptedKimina]:
    with ScriptedKimina() as server:
        yield server


def test_screen_writes_each_pairs_lean_status(
    database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina, tmp_path: Path
) -> None:
    kimina.script_code("add_comm_2 (", [Recorded("unknown_identifier.json")])
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_LEAN_SERVER_URL=kimina.base_url,
    )
    path = pairs_file(tmp_path, [queued_item(1), queued_item(2), supplied_item(3)])
    as_jsonl, as_csv = tmp_path / "results.jsonl", tmp_path / "results.csv"
    done = faithscreen(env, "screen", str(path), "--out", str(as_jsonl))
    assert done.returncode == 0, done.stderr
    # The same file again prints the earlier results (same database), now as CSV.
    again = faithscreen(env, "screen", str(path), "--format", "csv", "--out", str(as_csv))
    assert again.returncode == 0, again.stderr
    rows = [json.loads(line) for line in as_jsonl.read_text("utf-8").splitlines()]
    assert {r["external_id"]: r["lean_status"] for r in rows} == EXPECTED
    header, *cells = csv.reader(io.StringIO(as_csv.read_text("utf-8"), newline=""))
    table = [dict(zip(header, row, strict=True)) for row in cells]
    assert {r["external_id"]: r["lean_status"] for r in table} == EXPECTED
    assert len(kimina.checks) == 3  # the supplied pair was sent too
