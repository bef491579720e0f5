"""Shared by the test_batches_* files: batch items, submitting, polling, reading results."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from app.models import Batch, Job, PairRow, Review, Screening
from tests.support.in_process_api import Api
from tests.support.scripted_openai import contract_reply

TRANSLATOR_FAITHFUL = contract_reply("FAITHFUL")
JUDGE_FAITHFUL = contract_reply("FAITHFUL", back_translation=None)
TRANSLATOR_MISMATCH = contract_reply("MISMATCH", issues="the bound is wrong")
NDJSON = {"Content-Type": "application/x-ndjson"}
TABLES = {"batches": Batch, "screenings": Screening, "pairs": PairRow, "jobs": Job}
TABLES |= {"reviews": Review}
RESULT_FIELDS = {
    "index", "id", "external_id", "status", "outcome", "reasons", "blind", "lean_status",
}  # fmt: skip


@pytest.fixture(autouse=True)
def no_api_keys(clean_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches are tested without API keys (auth has tests of its own): the settings the
    `api` fixtures build read FAITHSCREEN_AUTH, set after `clean_env` cleared the rest.
    Import it into a test module to apply it there."""
    monkeypatch.setenv("FAITHSCREEN_AUTH", "off")


def queued_item(n: int, **extra: Any) -> dict[str, Any]:
    """A distinct pair (its number is in both statements) for a provider to screen."""
    return {
        "informal": f"For every natural number n, n + {n} = {n} + n.",
        "formal": f"theorem add_comm_{n} (n : ℕ) : n + {n} = {n} + n := by sorry",
        "external_id": f"item-{n}",
        **extra,
    }


def supplied_item(
    n: int, translator: str = TRANSLATOR_FAITHFUL, judge: str = JUDGE_FAITHFUL, **extra: Any
) -> dict[str, Any]:
    return queued_item(n, replies={"translator": translator, "judge": judge}, **extra)


def jsonl(items: Iterable[Mapping[str, Any]]) -> bytes:
    return b"".join(json.dumps(item).encode() + b"\n" for item in items)


async def post_batch(
    api: Api,
    items: list[dict[str, Any]],
    *,
    key: str | None = None,
    name: str | None = None,
    expect: int = 202,
) -> dict[str, Any]:
    headers = {"Idempotency-Key": key} if key else {}
    body: dict[str, Any] = {"items": items} | ({"name": name} if name else {})
    response = await api.client.post("/v1/batches", json=body, headers=headers)
    assert response.status_code == expect, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def get_json(api: Api, path: str) -> dict[str, Any]:
    response = await api.client.get(path)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def results(api: Api, batch_id: str) -> list[dict[str, Any]]:
    response = await api.client.get(f"/v1/batches/{batch_id}/results")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


async def wait_batch_done(api: Api, batch_id: str, within: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        body = await get_json(api, f"/v1/batches/{batch_id}")
        if body["status"] == "done":
            return body
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"batch {batch_id} not done in {within} s: {body}")


async def row_counts(api: Api) -> dict[str, int]:
    async with api.runtime.sessions() as session:
        return {
            name: (await session.execute(select(func.count()).select_from(model))).scalar_one()
            for name, model in TABLES.items()
        }


def error_of(response: httpx2.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert error["code"] and error["message"], body
    return error
