"""How the /review/stats page words the per-person numbers and reads its days (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.reports.review_stats import PersonStats
from app.web.pages import PageProblem
from app.web.stats_view import days_from, duration, percent, person_row


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(None, "—"), (0.4, "0 s"), (42.0, "42 s"), (185.0, "3 min 05 s"), (3720.0, "1 h 02 min")],
)
def test_durations_are_worded_for_people(seconds: float | None, shown: str) -> None:
    assert duration(seconds) == shown


def test_rates_are_percentages_and_none_is_a_dash() -> None:
    assert (percent(None), percent(0.125), percent(1.0)) == ("—", "12%", "100%")


def test_days_cover_whole_utc_days_until_included() -> None:
    days = days_from({"since": "2026-12-01", "until": "2026-12-02"})
    assert days.start == datetime(2026, 12, 1, tzinfo=UTC)
    assert days.end == datetime(2026, 12, 3, tzinfo=UTC)
    assert days_from({}).start is None and days_from({"until": ""}).end is None
    assert days_from({"until": "9999-12-31"}).end is None  # no day after the calendar's last


@pytest.mark.parametrize(
    "query",
    [{"since": "yesterday"}, {"until": "2026-13-01"}, {"since": "2026-12-02T00:00"},
     {"since": "2026-12-03", "until": "2026-12-02"}],
)  # fmt: skip
def test_a_day_that_is_not_one_is_a_readable_422(query: dict[str, str]) -> None:
    with pytest.raises(PageProblem) as refused:
        days_from(query)
    assert refused.value.error.status_code == 422


def test_a_person_row_says_agreement_with_its_counts() -> None:
    person = PersonStats(
        actor="alice", decisions=4, faithful=2, mismatch=1, unsure=1, unsure_rate=0.25,
        median_seconds=75.0, withdrawn=1, adjudications=0, double_reviewed=3, agreed=2,
        agreement=2 / 3,
    )  # fmt: skip
    row = person_row(person)
    assert (row.split, row.median, row.unsure_rate, row.agreement) == (
        "2 / 1 / 1",
        "1 min 15 s",
        "25%",
        "67% (2 of 3)",
    )
    alone = person_row(PersonStats("bob", 0, 0, 0, 0, None, None, 0, 1, 0, 0, None))
    assert (alone.unsure_rate, alone.median, alone.agreement) == ("—", "—", "—")
