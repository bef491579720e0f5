"""Evidence through the real API: a statement nested 32,000 levels deep is screened, not a
500, and a check that raises sends the pair to a person (`evidence_review:check_failed`)
on every path that runs the checks: a single request, a batch, the worker."""

from __future__ import annotations

from typing import Any

import pytest

import app.evidence.counted_set
from tests.integration.test_api_screenings import fetch, replies, submit, wait_done
from tests.support.batches import post_batch, results, wait_batch_done
from tests.support.in_process_api import Api


def deep(depth: int) -> dict[str, Any]:
    formal = "theorem t : " + "(" * depth + "1 = 1" + ")" * depth
    return {"informal": "Show that 1 = 1.", "formal": formal}


@pytest.fixture
def broken_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """`counted_set_underdetermined` raises on every pair, as a bug would."""

    def broken(source: str) -> None:
        raise RuntimeError("a bug in the check")

    monkeypatch.setattr(app.evidence.counted_set, "lean_tokens", broken)


@pytest.mark.parametrize("depth", [1_000, 32_000])
async def test_a_deeply_nested_statement_is_screened(idle_api: Api, depth: int) -> None:
    accepted = await submit(idle_api, {**deep(depth), "replies": replies()})
    body = await fetch(idle_api, accepted["id"])
    assert (body["outcome"], body["reasons"], body["evidence"]) == ("passed", [], [])


def assert_failed_closed(screening: dict[str, Any]) -> None:
    assert screening["outcome"] == "needs_review"
    assert "evidence_review:check_failed" in screening["reasons"]


async def test_a_raising_check_sends_a_supplied_pair_to_review(
    idle_api: Api, broken_check: None
) -> None:
    accepted = await submit(idle_api, {**deep(3), "replies": replies()})
    body = await fetch(idle_api, accepted["id"])
    assert_failed_closed(body)
    [finding] = body["evidence"]
    assert (finding["code"], finding["severity"]) == ("check_failed", "review")
    assert "counted_set_underdetermined" in finding["message"]


async def test_a_raising_check_sends_batch_items_to_review(
    idle_api: Api, broken_check: None
) -> None:
    items = [{**deep(n), "replies": replies(), "external_id": f"deep-{n}"} for n in (1, 2)]
    batch = await post_batch(idle_api, items)
    await wait_batch_done(idle_api, batch["id"])
    for row in await results(idle_api, batch["id"]):
        assert_failed_closed(row)


async def test_a_raising_check_sends_a_screened_pair_to_review(
    api: Api, broken_check: None
) -> None:
    accepted = await submit(api, deep(4))  # the scripted provider says FAITHFUL twice
    assert_failed_closed(await wait_done(api, accepted["id"]))
