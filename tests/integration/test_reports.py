"""The summary report over stored data whose every number is known in advance: through
GET /v1/reports/summary and `faithscreen report`, on SQLite and PostgreSQL.

The data (batch B, translator `t-model`, judge `j-model`, prompt `p1`):

    S1 passed  audit  decided mismatch   T ok faithful      J ok faithful (+ a confirmation)
    S2 passed  audit  decided faithful   T ok faithful      J ok faithful
    S3 flagged        decided mismatch   T invalid -> retry ok mismatch   J ok mismatch
    S4 flagged        decided faithful   T ok faithful      J ok mismatch
    S5 needs_review   decided, reopened  T truncated -> retry truncated    J ok unclear
    S6 flagged        undecided          T ok mismatch      J refused
    S7 passed  (no batch)                T ok faithful with `t-model-2`, prompt `p2`

Decided screenings have a queue item resolved as a reviewer resolves one; S5's is open
again (reopened), so the backlog is that one item.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from typer.testing import CliRunner

from app import clock
from app.cli.root import cli
from app.db.engine import create_engine, make_session_factory
from app.db.location import database_location
from app.models.queue_item import Claim, QueueItem
from app.repositories import batches, decisions, pairs, queue_items, reviews, screenings
from app.repositories.queue_items import NewQueueItem
from app.repositories.reviews import ReviewRecord
from app.vocabulary import DecisionKind, Pair, QueueStatus
from tests.support.clock import MovableClock
from tests.support.in_process_api import Api

BATCH = "00000000-0000-4000-8000-0000000000b1"
T, J = "translator", "judge"
# (role, purpose, status, verdict, latency) per call, in attempt order.
Call = tuple[str, str, str, str, int]
SCREENINGS: list[dict[str, Any]] = [
    {"outcome": "passed", "audit": True, "decided": "mismatch", "calls": [
        (T, "review", "ok", "faithful", 100), (J, "review", "ok", "faithful", 200),
        (J, "confirmation", "ok", "faithful", 200)]},
    {"outcome": "passed", "audit": True, "decided": "faithful", "calls": [
        (T, "review", "ok", "faithful", 100), (J, "review", "ok", "faithful", 200)]},
    {"outcome": "flagged", "reasons": ["judge_mismatch"], "decided": "mismatch", "calls": [
        (T, "review", "invalid", "unclear", 300), (T, "format_retry", "ok", "mismatch", 100),
        (J, "review", "ok", "mismatch", 200)]},
    {"outcome": "flagged", "reasons": ["judge_mismatch", "translator_mismatch"],
     "decided": "faithful", "calls": [
        (T, "review", "ok", "faithful", 100), (J, "review", "ok", "mismatch", 400)]},
    {"outcome": "needs_review", "reasons": ["translator_conflicting"], "decided": "mismatch",
     "reopened": True, "calls": [
        (T, "review", "truncated", "unclear", 500),
        (T, "format_retry", "truncated", "unclear", 500),
        (J, "review", "ok", "unclear", 200)]},
    {"outcome": "flagged", "reasons": ["judge_mismatch"], "calls": [
        (T, "review", "ok", "mismatch", 100), (J, "review", "refused", "unclear", 200)]},
]  # fmt: skip
OTHER = {"outcome": "passed", "batch": None, "model": "t-model-2", "prompt": "p2", "calls": [
    (T, "review", "ok", "faithful", 100)]}  # fmt: skip
MODELS = {T: "t-model", J: "j-model"}


def usage(role: str, index: int, attempt: int) -> dict[str, Any]:
    """Translator calls: 10 prompt, 5 completion tokens (S3's retry adds 7 reasoning, and
    one call reports reasoning as null); judge calls: 20 and 10."""
    if role == J:
        return {"prompt_tokens": 20, "completion_tokens": 10}
    reasoning = 7 if (index, attempt) == (2, 2) else None
    return {"prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": reasoning}


async def seed(session: AsyncSession, extra: Sequence[dict[str, Any]] = ()) -> None:
    """The data above, and `extra` screenings specified the same way (`tags` too)."""
    await batches.add(
        session, batch_id=BATCH, name="b", total=6, idempotency_key=None, body_sha256="0" * 64
    )
    for index, spec in enumerate([*SCREENINGS, OTHER, *extra]):
        await _screening(session, index, spec)
    await session.commit()


async def _screening(session: AsyncSession, index: int, spec: dict[str, Any]) -> None:
    pair = await pairs.get_or_create(session, Pair(f"statement {index}", f"theorem t{index}"))
    batch_id = spec.get("batch", BATCH)
    row = await screenings.add(
        session, pair_id=pair.id, external_id=None, batch_id=batch_id, confirmations=0,
        tags=spec.get("tags", []),
    )  # fmt: skip
    reasons = spec.get("reasons", [])
    await screenings.record_outcome(
        session, row.id, outcome=spec["outcome"], reasons=reasons, evidence=[],
        policy_version="policy", evidence_version="evidence",
    )  # fmt: skip
    await _reviews(session, index, row.id, spec)
    if "decided" in spec:
        await _decide(session, row.id, spec, reasons, batch_id)


async def _reviews(
    session: AsyncSession, index: int, screening_id: str, spec: dict[str, Any]
) -> None:
    attempts = {T: 0, J: 0}
    for role, purpose, status, verdict, latency in spec["calls"]:
        attempts[role] += 1
        record = ReviewRecord(
            screening_id=screening_id, role=role, attempt=attempts[role], purpose=purpose,
            verdict=verdict, parse_status=status, parser_version="parser",
            model=spec.get("model", MODELS[role]), prompt_version=spec.get("prompt", "p1"),
            latency_ms=latency, usage=usage(role, index, attempts[role]),
        )  # fmt: skip
        await reviews.add(session, record)


async def _decide(
    session: AsyncSession, screening_id: str, spec: dict[str, Any], reasons: list[str],
    batch_id: str | None,
) -> None:  # fmt: skip
    item = NewQueueItem(
        screening_id=screening_id,
        reasons=reasons,
        audit=spec.get("audit", False),
        batch_id=batch_id,
    )
    await queue_items.add(session, item)
    item_id = (
        await session.execute(select(QueueItem.id).where(QueueItem.screening_id == screening_id))
    ).scalar_one()
    now = clock.utcnow()
    held = Claim("ada", now + timedelta(hours=1), now)
    await queue_items.move(session, item_id, QueueStatus.CLAIMED, held, now=now)
    await _trail(session, item_id, screening_id, DecisionKind.DECISION, spec["decided"], now)
    await decisions.set_final_decision(session, screening_id, spec["decided"], at=now)
    await queue_items.move(session, item_id, QueueStatus.RESOLVED, None, now=now, resolving=True)
    if spec.get("reopened"):
        await _trail(session, item_id, screening_id, DecisionKind.REOPEN, None, now)
        await decisions.set_final_decision(session, screening_id, None, at=None)
        await queue_items.move(session, item_id, QueueStatus.OPEN, None, now=now, unresolving=True)


async def _trail(
    session: AsyncSession, item_id: int, screening_id: str, kind: DecisionKind,
    decision: str | None, at: datetime,
) -> None:  # fmt: skip
    await decisions.add(
        session, queue_item_id=item_id, screening_id=screening_id, kind=kind, decision=decision,
        note="", actor="ada", actor_role="reviewer", at=at,
    )  # fmt: skip


def rate(numerator: int, denominator: int, low: float | None, high: float | None) -> dict[str, Any]:
    value = numerator / denominator if denominator else None
    return {"numerator": numerator, "denominator": denominator, "value": value, "low": low,
            "high": high, "too_few": denominator < 10}  # fmt: skip


HALF = rate(1, 2, 0.0945, 0.9055)  # Wilson 1/2
HUMAN = {"flagged_precision": HALF, "false_pass": HALF}
NO_HUMAN = {"flagged_precision": rate(0, 0, None, None), "false_pass": rate(0, 0, None, None)}
READINGS = dict.fromkeys(
    ("ok", "model_unclear", "unreadable", "truncated", "empty", "provider_error", "refused"), 0
)


def tokens(prompt: float, completion: float, reasoning: float) -> dict[str, float]:
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "reasoning_tokens": reasoning}  # fmt: skip


JUDGE = {
    "role": J, "model": "j-model", "prompt_version": "p1", "supplied": False, "screenings": 6,
    "calls": 7, "readings": READINGS | {"ok": 4, "model_unclear": 1, "refused": 1},
    "format_retry": rate(0, 6, 0.0, 0.3903), "retry_recovered": rate(0, 0, None, None),
    "truncation": rate(0, 7, 0.0, 0.3543), "tokens": tokens(140, 70, 0),
    "tokens_per_screening": tokens(140 / 6, 70 / 6, 0), "timed_calls": 7, "calls_not_sent": 0,
    "latency_p50_ms": 200, "latency_p95_ms": 400, "human": HUMAN,
}  # fmt: skip
TRANSLATOR = {
    "role": T, "model": "t-model", "prompt_version": "p1", "supplied": False, "screenings": 6,
    "calls": 8, "readings": READINGS | {"ok": 5, "truncated": 1},
    "format_retry": rate(2, 6, 0.0968, 0.7000), "retry_recovered": HALF,
    "truncation": rate(2, 8, 0.0715, 0.5907), "tokens": tokens(80, 40, 7),
    "tokens_per_screening": tokens(80 / 6, 40 / 6, 7 / 6), "timed_calls": 8, "calls_not_sent": 0,
    "latency_p50_ms": 100, "latency_p95_ms": 500, "human": HUMAN,
}  # fmt: skip
OTHER_TRANSLATOR = TRANSLATOR | {
    "model": "t-model-2", "prompt_version": "p2", "screenings": 1, "calls": 1,
    "readings": READINGS | {"ok": 1}, "format_retry": rate(0, 1, 0.0, 0.7935),
    "retry_recovered": rate(0, 0, None, None), "truncation": rate(0, 1, 0.0, 0.7935),
    "tokens": tokens(10, 5, 0), "tokens_per_screening": tokens(10, 5, 0), "timed_calls": 1,
    "latency_p50_ms": 100, "latency_p95_ms": 100, "human": NO_HUMAN,
}  # fmt: skip
UNDECIDED = {"screenings": 1, "faithful": 0, "mismatch": 0, "undecided": 1,
             "mismatch_share": rate(0, 0, None, None)}  # fmt: skip
BATCH_REPORT = {
    "screenings": 6,
    "outcomes": {"passed": 2, "flagged": 3, "needs_review": 1},
    "reasons": {"judge_mismatch": 3, "translator_conflicting": 1, "translator_mismatch": 1},
    "tokens": tokens(220, 110, 7),
    "tokens_per_screening": tokens(220 / 6, 110 / 6, 7 / 6),
    "groups": [JUDGE, TRANSLATOR],
    # Both ok on S1-S4: (f,f) (f,f) (m,m) (f,m): po 3/4, pe 1/2 -> kappa 0.5.
    "agreement": {"screenings": 4, "kappa": 0.5},
    "human": HUMAN,
    # S5, reopened: waiting again, with no decision.
    "resolutions": {"total": UNDECIDED, "by_reason": {"translator_conflicting": UNDECIDED}},
    "tags": {"shown": [], "total": 0},
    # No item was double-reviewed; S1 (passed) and S3 (flagged) were decided mismatch, with
    # no defect named; no pair was decided both ways.
    "reviewer_agreement": {"double_reviewed": 0, "agreed": 0, "agreement": None, "kappa": None},
    "defects": {
        "mismatches": {"flagged": 1, "passed": 1},
        "by_outcome": {"flagged": {}, "passed": {}},
    },
    "conflicts": 0,
}


def approx(report: Any) -> Any:
    """Wilson ends are given to 4 places above."""
    if isinstance(report, dict):
        return {k: approx(v) for k, v in report.items()}
    if isinstance(report, list):
        return [approx(v) for v in report]
    if isinstance(report, float):
        return pytest.approx(report, abs=1e-4)
    return report


async def get_report(api: Api, **params: str) -> dict[str, Any]:
    response = await api.client.get("/v1/reports/summary", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def seeded(api: Api) -> None:
    async with api.runtime.sessions() as session:
        await seed(session)


async def test_the_batch_report_has_every_known_number(
    bare_api: Api, moved_clock: MovableClock
) -> None:
    # The seed must fall within one UTC day: near midnight, move the clock past it.
    now = clock.utcnow()
    to_midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0) - now
    if to_midnight < timedelta(minutes=10):
        moved_clock.advance(to_midnight.total_seconds() + 1)
    start = clock.utcnow()
    await seeded(bare_api)
    report = await get_report(bare_api, batch_id=BATCH)
    backlog, days = report.pop("backlog"), report.pop("days")
    judges, panel = report.pop("judges"), report.pop("panel_agreement")
    assert report.pop("lean") is None  # no Lean server: nothing stopped by it
    assert report == approx(BATCH_REPORT)
    # The single judge's breakdown is its one group's; no panel screened.
    same = ("screenings", "calls", "readings", "tokens", "latency_p50_ms", "latency_p95_ms")
    assert [j["judge"] for j in judges] == ["judge"]
    assert {k: judges[0][k] for k in same} == approx({k: JUDGE[k] for k in same})
    assert panel == {"n": 0, "fleiss_kappa": None, "pairs": {}}
    # The seed runs now: every screening was created today (UTC), and S5's item waits.
    assert days == [{"day": start.date().isoformat(), "screenings": 6,
                     "outcomes": {"passed": 2, "flagged": 3, "needs_review": 1}}]  # fmt: skip
    assert (backlog["open"], backlog["claimed"], backlog["waiting"]) == (1, 0, 1)
    s5 = (await bare_api.client.get("/v1/queue", params={"status": "open"})).json()["items"]
    assert backlog["oldest"]["item_id"] == s5[0]["id"] and len(s5) == 1
    as_of = datetime.fromisoformat(backlog["as_of"])
    created = datetime.fromisoformat(backlog["oldest"]["created_at"])
    assert start <= created <= as_of <= clock.utcnow()
    assert backlog["oldest_age_seconds"] == pytest.approx((as_of - created).total_seconds())


async def test_the_unfiltered_report_adds_the_screening_outside_the_batch(bare_api: Api) -> None:
    await seeded(bare_api)
    report = await get_report(bare_api)
    assert report["screenings"] == 7
    assert report["outcomes"] == {"passed": 3, "flagged": 3, "needs_review": 1}
    assert report["groups"] == approx([JUDGE, TRANSLATOR, OTHER_TRANSLATOR])
    assert report["human"] == approx(HUMAN)


async def test_model_and_prompt_filters_keep_only_matching_calls(bare_api: Api) -> None:
    await seeded(bare_api)
    report = await get_report(bare_api, model="t-model-2", prompt_version="p2")
    assert report["screenings"] == 1
    assert report["groups"] == approx([OTHER_TRANSLATOR])
    assert report["agreement"] == {"screenings": 0, "kappa": None}
    assert (await get_report(bare_api, prompt_version="p9"))["screenings"] == 0


async def test_the_role_filter_keeps_only_that_role(bare_api: Api) -> None:
    await seeded(bare_api)
    report = await get_report(bare_api, role="judge", batch_id=BATCH)
    assert report["groups"] == approx([JUDGE])
    assert report["screenings"] == 6


async def test_since_is_inclusive_and_until_exclusive(bare_api: Api) -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    await seeded(bare_api)
    after = datetime.now(UTC) + timedelta(seconds=1)
    assert (await get_report(bare_api, since=before.isoformat()))["screenings"] == 7
    assert (await get_report(bare_api, until=after.isoformat()))["screenings"] == 7
    assert (await get_report(bare_api, since=after.isoformat()))["screenings"] == 0
    assert (await get_report(bare_api, until=before.isoformat()))["screenings"] == 0


async def test_an_unknown_role_is_refused(bare_api: Api) -> None:
    response = await bare_api.client.get("/v1/reports/summary", params={"role": "oracle"})
    assert response.status_code == 422


async def test_an_empty_database_reports_zeros(bare_api: Api) -> None:
    report = await get_report(bare_api)
    assert report["screenings"] == 0 and report["groups"] == []
    assert report["human"] == NO_HUMAN


async def seed_database(url: str, extra: Sequence[dict[str, Any]] = ()) -> None:
    engine = create_engine(url)
    try:
        async with make_session_factory(engine)() as session:
            await seed(session, extra)
    finally:
        await engine.dispose()


def test_the_terminal_report_prints_the_known_numbers(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(seed_database(database_url))
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", database_url)
    result = CliRunner().invoke(cli, ["report", "--batch", BATCH])
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.split()) for line in result.output.splitlines()]
    for expected in (
        "Screenings: 6",
        "passed 2",
        "judge_mismatch 3",
        "translator / t-model / prompt p1: 6 screenings, 8 calls",
        "final readings ok 5, model_unclear 0, unreadable 0, truncated 1, empty 0, "
        "provider_error 0, refused 0",
        "format retry n<10 (2/6)",
        "retry recovered n<10 (1/2)",
        "tokens prompt 80, completion 40, reasoning 7",
        "latency ms p50 100, p95 500",
        "judge / j-model / prompt p1: 6 screenings, 7 calls",
        "Translator/judge agreement: kappa 0.500 over 4 screenings",
        "flagged precision n<10 (1/2)",
    ):
        assert expected in lines, f"{expected!r} not in:\n{result.output}"
    assert "t-model-2" not in result.output


def test_the_html_report_is_written_with_the_known_numbers(
    database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asyncio.run(seed_database(database_url))
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", database_url)
    target = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", "--batch", BATCH, "--html", str(target)])
    assert result.exit_code == 0, result.output
    # The tables still go to stdout; the note about the file to stderr.
    assert "Screenings: 6" in result.stdout and str(target) not in result.stdout
    assert result.stderr.splitlines() == [
        f"faithscreen: database {database_location(database_url)}",
        f"wrote {target}",
    ]
    page = target.read_text(encoding="utf-8")
    for expected in (
        f"Filters: batch {BATCH}.",
        "6 finished screenings",
        "<h3>translator / t-model / prompt p1</h3>",
        "<h3>judge / j-model / prompt p1</h3>",
        "<td>format retry</td><td>n&lt;10 (2/6)</td>",
        "<td>latency ms</td><td>p50 100, p95 500</td>",
        "<td>tokens</td><td>prompt 80, completion 40, reasoning 7</td>",
        "Cohen's kappa <strong>0.500</strong> over 4 screenings",
        "<td>judge_mismatch</td><td>3</td>",
    ):
        assert expected in page, expected
    assert "t-model-2" not in page
    # Outcomes, reasons, readings, latency, a rate chart per group, the human rates, the
    # decisions on needs_review by reason, screenings per day (no tags: no tag chart).
    assert page.count('<svg class="chart"') == 9


@pytest.mark.parametrize("where", ["missing-folder/report.html", "a-folder"])
def test_an_html_path_that_cannot_be_written_is_refused_before_reading(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a-folder").mkdir()
    # No database answers at this URL: the path is refused before one is asked.
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path}/no/db.sqlite")
    result = CliRunner().invoke(cli, ["report", "--html", str(tmp_path / where)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"faithscreen report: cannot write {tmp_path / where}: ")
    assert result.stdout == ""


def test_a_report_of_an_unknown_batch_exits_1_naming_it(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(seed_database(database_url))
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", database_url)
    result = CliRunner().invoke(cli, ["report", "--batch", "nope"])
    assert result.exit_code == 1
    assert "faithscreen report: no batch nope" in result.stderr
    assert result.stdout == ""
