"""The /review/stats page: per person, the numbers GET /v1/review/stats serves
(app/reports/review_stats.person_stats), worded for people, over whole UTC days picked on
the page (`since` and `until`, both included; either left open)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from app.errors import AppError
from app.reports.review_stats import PersonStats
from app.web.pages import PageProblem


@dataclass(frozen=True, slots=True)
class Days:
    """The days asked for, as typed (for the form) and as the range they cover."""

    since: date | None
    until: date | None

    @property
    def start(self) -> datetime | None:
        return None if self.since is None else datetime.combine(self.since, time(), UTC)

    @property
    def end(self) -> datetime | None:
        """The first moment after `until`, which is included whole."""
        if self.until is None:
            return None
        return datetime.combine(self.until, time(), UTC) + timedelta(days=1)


@dataclass(frozen=True, slots=True)
class PersonRow:
    """One person's line of the table, each number already worded."""

    actor: str
    decisions: int
    split: str
    median: str
    unsure_rate: str
    withdrawn: int
    adjudications: int
    agreement: str


def _day(query: Mapping[str, str], name: str) -> date | None:
    value = query.get(name, "").strip()
    if not value:
        return None
    try:
        if len(value) != 10:
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError as error:
        problem = AppError(422, "validation_error", f"{name}: a day as YYYY-MM-DD")
        raise PageProblem(problem, back_url="/review/stats") from error


def days_from(query: Mapping[str, str]) -> Days:
    days = Days(_day(query, "since"), _day(query, "until"))
    if days.since and days.until and days.since > days.until:
        problem = AppError(422, "validation_error", "since: a day no later than until")
        raise PageProblem(problem, back_url="/review/stats")
    if days.until == date.max:  # the day after it is past the calendar
        return Days(days.since, None)
    return days


def duration(seconds: float | None) -> str:
    """`42 s`, `3 min 05 s`, `1 h 02 min`; `—` without a timed decision."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.0%}"


def person_row(person: PersonStats) -> PersonRow:
    agreed = f"{person.agreed} of {person.double_reviewed}"
    return PersonRow(
        actor=person.actor,
        decisions=person.decisions,
        split=f"{person.faithful} / {person.mismatch} / {person.unsure}",
        median=duration(person.median_seconds),
        unsure_rate=percent(person.unsure_rate),
        withdrawn=person.withdrawn,
        adjudications=person.adjudications,
        agreement=f"{percent(person.agreement)} ({agreed})" if person.double_reviewed else "—",
    )
