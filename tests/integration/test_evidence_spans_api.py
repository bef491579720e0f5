"""Evidence spans through the real API: a screened pair's findings carry `field`, `line`,
`column` and `end_column` (stored with the screening, shown by GET), the binder default
flags the pair whatever the replies say, and a finding without a location shows nulls."""

from __future__ import annotations

import pytest

import app.evidence.counted_set
from tests.integration.test_api_screenings import fetch, replies, submit
from tests.support.in_process_api import Api

FORMAL = "theorem t\n    (n : ℕ := 5) (h : 0 < n) :\n    n + 0 = 5 := by sorry"


async def test_a_finding_shows_where_it_is(idle_api: Api) -> None:
    body = {"informal": "Let n = 5. Show that n + 0 = 5.", "formal": FORMAL}
    accepted = await submit(idle_api, {**body, "replies": replies()})
    screening = await fetch(idle_api, accepted["id"])
    assert screening["outcome"] == "flagged"
    assert "evidence_flag:binder_default" in screening["reasons"]
    assert screening["evidence_version"] == "evidence-8"
    [finding] = screening["evidence"]
    assert finding["code"] == "binder_default" and finding["severity"] == "flag"
    line = FORMAL.split("\n")[finding["line"] - 1]
    assert finding["field"] == "formal"
    assert line[finding["column"] : finding["end_column"]] == "(n : ℕ := 5)"


async def test_a_finding_without_a_location_shows_nulls(
    idle_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(source: str) -> None:
        raise RuntimeError("a bug in the check")

    monkeypatch.setattr(app.evidence.counted_set, "lean_tokens", broken)
    body = {"informal": "Show that 1 = 1.", "formal": "theorem t : 1 = 1 := by sorry"}
    accepted = await submit(idle_api, {**body, "replies": replies()})
    [finding] = (await fetch(idle_api, accepted["id"]))["evidence"]
    assert finding["code"] == "check_failed"
    assert [finding[key] for key in ("field", "line", "column", "end_column")] == [None] * 4
