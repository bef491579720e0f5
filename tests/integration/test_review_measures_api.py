"""What people's decisions measure, over HTTP on stored trails: the summary report's
`reviewer_agreement`, `defects` and `conflicts`, and GET /v1/review/stats per person. The
trails are written as the review state machine leaves them (double reviews, an
adjudication, an undo, an `unsure`), and every number is the hand count in the comments."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from app.clock import utcnow
from app.models import Decision, QueueItem, Screening
from app.models.api_key import AccessRole
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import bearer, error_code, make_key, queue_items, submit


@dataclass
class Trails:
    api: Api
    alice: str
    bot: str
    start: datetime
    items: dict[str, int]

    async def get(self, path: str, **params: Any) -> Any:
        response = await self.api.client.get(path, params=params, headers=bearer(self.alice))
        assert response.status_code == 200, response.text
        return response.json()


async def record(
    api: Api,
    item_id: int,
    screening_id: str,
    actor: str,
    decision: str | None,
    at: datetime,
    *,
    kind: str = "decision",
    defects: tuple[str, ...] = (),
    seconds: float | None = None,
    withdraws_id: int | None = None,
) -> int:
    async with api.runtime.sessions() as session:
        row = Decision(
            queue_item_id=item_id,
            screening_id=screening_id,
            kind=kind,
            decision=decision,
            note="",
            defects=list(defects),
            actor=actor,
            actor_role="admin" if actor == "admin" else "reviewer",
            opened_at=at - timedelta(seconds=seconds) if seconds is not None else None,
            claimed_at=at if seconds is not None else None,
            withdraws_id=withdraws_id,
            created_at=at,
        )
        session.add(row)
        await session.commit()
        return row.id


async def resolve(api: Api, item_id: int, screening_id: str, final: str, *, double: bool) -> None:
    async with api.runtime.sessions() as session:
        await session.execute(
            update(QueueItem)
            .where(QueueItem.id == item_id)
            .values(status="resolved", open_pair_id=None, double_review=double)
        )
        await session.execute(
            update(Screening).where(Screening.id == screening_id).values(final_decision=final)
        )
        await session.commit()


@pytest.fixture
async def trails(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Trails]:
    settings = unconfigured_settings.model_copy(update={"auth": "on", "audit_rate": 1.0})
    async with start_api(settings, with_worker=False) as api:
        alice = await make_key(api, AccessRole.REVIEWER, "alice")
        bot = await make_key(api, AccessRole.SUBMITTER, "bot")
        ids = {f"s{n}": await submit(api, bot, n, "passed") for n in (1, 2, 3)}
        ids["s4"] = await submit(api, bot, 4, "flagged")
        by_screening = {i["screening_id"]: i["id"] for i in await queue_items(api, alice)}
        items = {name: by_screening[sid] for name, sid in ids.items()}
        start = utcnow() - timedelta(hours=1)
        yield Trails(api, alice, bot, start, items)


async def write_trails(trails: Trails) -> dict[str, str]:
    """The trails of the module docstring; returns screening ids by name."""
    api, t = trails.api, trails.start
    listed = {i["id"]: i["screening_id"] for i in await queue_items(api, trails.alice)}
    sid = {name: listed[item] for name, item in trails.items.items()}
    item = trails.items

    def at(minutes: int) -> datetime:
        return t + timedelta(minutes=minutes)

    # s1: a double review, both faithful (ann 10 s, bo 100 s).
    await record(api, item["s1"], sid["s1"], "ann", "faithful", at(1), seconds=10)
    await record(api, item["s1"], sid["s1"], "bo", "faithful", at(2), seconds=100)
    await resolve(api, item["s1"], sid["s1"], "faithful", double=True)
    # s2: both mismatch, with defects (ann 20 s, bo 200 s).
    await record(api, item["s2"], sid["s2"], "ann", "mismatch", at(3), seconds=20,
                 defects=("dropped_hypothesis",))  # fmt: skip
    await record(api, item["s2"], sid["s2"], "bo", "mismatch", at(4), seconds=200,
                 defects=("dropped_hypothesis", "wrong_type"))  # fmt: skip
    await resolve(api, item["s2"], sid["s2"], "mismatch", double=True)
    # s3: disputed (ann faithful 30 s, bo mismatch 300 s), settled mismatch by an admin.
    await record(api, item["s3"], sid["s3"], "ann", "faithful", at(5), seconds=30)
    await record(api, item["s3"], sid["s3"], "bo", "mismatch", at(6), seconds=300,
                 defects=("vacuous",))  # fmt: skip
    await record(api, item["s3"], sid["s3"], "admin", "mismatch", at(7), kind="adjudication",
                 defects=("vacuous",))  # fmt: skip
    await resolve(api, item["s3"], sid["s3"], "mismatch", double=True)
    # s4 (flagged): ann unsure (40 s), a mismatch she undid, then mismatch (50 s).
    await record(api, item["s4"], sid["s4"], "ann", "unsure", at(8), seconds=40)
    undone = await record(api, item["s4"], sid["s4"], "ann", "faithful", at(9), seconds=5)
    await record(api, item["s4"], sid["s4"], "ann", None, at(10), kind="withdrawal",
                 withdraws_id=undone)  # fmt: skip
    await record(api, item["s4"], sid["s4"], "ann", "mismatch", at(11), seconds=50,
                 defects=("wrong_constant",))  # fmt: skip
    await resolve(api, item["s4"], sid["s4"], "mismatch", double=False)
    # s5: pair 1 asked again, now decided mismatch by bo (no defect): a conflict with s1.
    sid["s5"] = await submit(api, trails.bot, 1, "passed")
    listed = {i["screening_id"]: i["id"] for i in await queue_items(api, trails.alice)}
    item5 = listed.get(sid["s5"], item["s1"])
    await record(api, item5, sid["s5"], "bo", "mismatch", at(12), seconds=400)
    await resolve(api, item5, sid["s5"], "mismatch", double=False)
    return sid


async def test_the_summary_report_measures_agreement_defects_and_conflicts(
    trails: Trails,
) -> None:
    await write_trails(trails)
    summary = await trails.get("/v1/reports/summary")
    # (F,F), (M,M), (F,M): 2 of 3 agree; ann F2 M1, bo F1 M2: chance 4/9, kappa 0.4.
    agreement = summary["reviewer_agreement"]
    assert (agreement["double_reviewed"], agreement["agreed"]) == (3, 2)
    assert agreement["agreement"] == pytest.approx(2 / 3)
    assert agreement["kappa"] == pytest.approx(0.4)
    assert summary["defects"] == {
        "mismatches": {"flagged": 1, "passed": 3},
        "by_outcome": {
            "flagged": {"wrong_constant": 1},
            "passed": {"dropped_hypothesis": 1, "vacuous": 1, "wrong_type": 1},
        },
    }
    assert summary["conflicts"] == 1


async def test_below_two_double_reviews_agreement_and_kappa_are_null(trails: Trails) -> None:
    api, item = trails.api, trails.items
    listed = {i["id"]: i["screening_id"] for i in await queue_items(api, trails.alice)}
    sid = listed[item["s1"]]
    await record(api, item["s1"], sid, "ann", "faithful", trails.start)
    await record(api, item["s1"], sid, "bo", "faithful", trails.start + timedelta(seconds=1))
    await resolve(api, item["s1"], sid, "faithful", double=True)
    summary = await trails.get("/v1/reports/summary")
    assert summary["reviewer_agreement"] == {
        "double_reviewed": 1,
        "agreed": 1,
        "agreement": None,
        "kappa": None,
    }
    assert summary["conflicts"] == 0 and summary["defects"]["mismatches"] == {}


async def test_review_stats_per_person(trails: Trails) -> None:
    await write_trails(trails)
    people = {p["actor"]: p for p in (await trails.get("/v1/review/stats"))["people"]}
    assert sorted(people) == ["admin", "ann", "bo"]
    ann, bo, admin = people["ann"], people["bo"], people["admin"]
    # ann: faithful, mismatch, faithful, unsure, mismatch (the undone one left out).
    assert (ann["decisions"], ann["faithful"], ann["mismatch"], ann["unsure"]) == (5, 2, 2, 1)
    assert ann["unsure_rate"] == pytest.approx(0.2) and ann["withdrawn"] == 1
    # Seconds 10, 20, 30, 40, 50 -> 30; bo's 100, 200, 300, 400 -> 250.
    assert ann["median_seconds"] == pytest.approx(30) and bo["median_seconds"] == 250
    assert (ann["double_reviewed"], ann["agreed"]) == (3, 2)
    assert ann["agreement"] == pytest.approx(2 / 3) and bo["agreement"] == ann["agreement"]
    assert (bo["decisions"], bo["unsure_rate"], bo["withdrawn"]) == (4, 0.0, 0)
    assert (admin["decisions"], admin["adjudications"], admin["median_seconds"]) == (0, 1, None)
    # A window holding s1's and s2's decisions alone: 2 double reviews, both agreed.
    until = (trails.start + timedelta(minutes=4, seconds=30)).isoformat()
    window = (await trails.get("/v1/review/stats", until=until))["people"]
    assert [(p["actor"], p["decisions"], p["agreement"]) for p in window] == [
        ("ann", 2, 1.0),
        ("bo", 2, 1.0),
    ]


async def test_review_stats_need_a_reviewer_key(trails: Trails) -> None:
    response = await trails.api.client.get("/v1/review/stats", headers=bearer(trails.bot))
    assert error_code(response, 403) == "forbidden"
    assert (await trails.api.client.get("/v1/review/stats")).status_code == 401
