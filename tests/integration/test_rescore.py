"""Re-scoring over stored data: `faithscreen rescore` and POST /v1/rescore, on SQLite and
PostgreSQL. No test here calls a model for the rescore itself.

The constructed data (written as an old, wrong parser `naive-0` would have read it: the
first `VERDICT:` anywhere in the text, so a back-translation quoting "VERDICT: FAITHFUL"
passed a reply that says MISMATCH):

    QUOTED   batch B   passed  T reply quotes "VERDICT: FAITHFUL", says MISMATCH   J FAITHFUL
    CLEAN    batch B   passed  both FAITHFUL, read by the current parser
    FAILED   batch B   needs_review (job_failed), no calls
    ELSEWHERE no batch passed  as QUOTED
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from typer.testing import CliRunner

from app.cli.root import cli
from app.clock import utcnow
from app.contract import PARSER_VERSION
from app.contract.provider_reply import ProviderReply
from app.contract.reading import Reading
from app.db.engine import sync_url
from app.evidence import EVIDENCE_VERSION
from app.models import QueueItem, ReadingRow, Rescore, Review, RulingRow, Screening
from app.policy import POLICY_VERSION
from app.reports.service import summary_report
from app.repositories import batches, queue_items
from app.repositories.queue_items import NewQueueItem
from app.repositories.reports import ReportFilters
from app.repositories.rescores import Scope
from app.rescore import service
from app.rescore.replay import Parser, Reader, read_text_reply
from app.rescore.service import RescoreRun, rescore
from app.vocabulary import Pair, ParseStatus, Verdict
from tests.support import rescoring
from tests.support.batches import wait_batch_done
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api
from tests.support.rescoring import applied, dry_run
from tests.support.scripted_openai import HttpError, Reply, contract_reply

BATCH = "00000000-0000-4000-8000-0000000000c1"
FAITHFUL = contract_reply("FAITHFUL")
QUOTING = contract_reply(
    "MISMATCH",
    back_translation='It restates the claim "VERDICT: FAITHFUL" but for all n, not n > 0.',
    issues="drops the hypothesis n > 0",
)
UNREADABLE = "Looks right to me.\n"
replay_all = service._replay_all


def naive_read(reply: ProviderReply) -> Reading:
    """The old parser: the first VERDICT anywhere in the reply."""
    found = re.search(r"VERDICT:\s*(FAITHFUL|MISMATCH|UNCLEAR)", reply.content or "")
    if found is None:
        return Reading(Verdict.UNCLEAR, ParseStatus.MISSING, None, None, "naive-0")
    return Reading(Verdict(found.group(1).lower()), ParseStatus.OK, None, None, "naive-0")


def lenient_read(reply: ProviderReply) -> Reading:
    """An old parser that took anything for FAITHFUL."""
    return Reading(Verdict.FAITHFUL, ParseStatus.OK, None, None, "lenient-0")


def unreadable_read(reply: ProviderReply) -> Reading:
    """An old parser that could read nothing."""
    return Reading(Verdict.UNCLEAR, ParseStatus.MISSING, None, None, "blind-0")


def pair(n: int) -> Pair:
    informal = f"For every natural number n, n + {n} = {n} + n."
    return Pair(informal, f"theorem t{n} (n : ℕ) : n + {n} = {n} + n := by sorry")


async def stored_screening(
    session: AsyncSession,
    n: int,
    replies: tuple[str, ...] | None,
    *,
    batch_id: str | None = BATCH,
    outcome: str = "passed",
    reasons: tuple[str, ...] = (),
    read: Reader = naive_read,
    label: str | None = None,
) -> str:
    """A finished screening whose reviews were read by `read` (the old parser by default)."""
    return await rescoring.stored_screening(
        session, pair(n), f"x{n}", replies or (), read=read, batch_id=batch_id, outcome=outcome,
        reasons=reasons, label=label,
    )  # fmt: skip


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    async with session_factory() as session:
        await batches.add(
            session, batch_id=BATCH, name="b", total=3, idempotency_key=None, body_sha256="0" * 64
        )
        ids = {
            "quoted": await stored_screening(session, 1, (QUOTING, FAITHFUL)),
            "clean": await stored_screening(session, 2, (FAITHFUL, FAITHFUL), read=read_text_reply),
            "failed": await stored_screening(
                session, 3, None, outcome="needs_review", reasons=("job_failed",)
            ),
            "elsewhere": await stored_screening(session, 4, (QUOTING, FAITHFUL), batch_id=None),
        }
        await session.commit()
    return ids


async def counts(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, int]:
    models = {"readings": ReadingRow, "rulings": RulingRow, "rescores": Rescore}
    models |= {"reviews": Review, "queue_items": QueueItem}
    async with session_factory() as session:
        return {
            name: (await session.execute(select(func.count()).select_from(model))).scalar_one()
            for name, model in models.items()
        }


async def outcome_of(session_factory: async_sessionmaker[AsyncSession], screening_id: str) -> str:
    async with session_factory() as session:
        screening = await session.get(Screening, screening_id)
        assert screening is not None and screening.outcome is not None
        return screening.outcome


def run_cli(database_url: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["rescore", *args, "--database-url", database_url])
    assert result.exit_code == 0, result.output
    return result.stdout


# --- The diff: nothing written ---------------------------------------------------------


async def test_a_dry_run_prints_the_diff_and_writes_nothing(
    session_factory: async_sessionmaker[AsyncSession], database_url: str, tmp_path: Path
) -> None:
    ids = await seed(session_factory)
    before = await counts(session_factory)
    ids_file = tmp_path / "changed.txt"
    output = await asyncio.to_thread(run_cli, database_url, "--all", "--changed-ids", str(ids_file))
    assert "Replayed 4 screenings" in output
    assert "unchanged 1 (of which 0 under new versions), changed 2" in output
    assert "WARNING" not in output
    assert "skipped (nothing to replay): job_failed 1" in output
    assert re.search(r"passed -> flagged\s+2\n\s+\+translator_mismatch\s+2\n", output)
    assert re.search(r"translator_mismatch\s+2", output)
    assert re.search(r"ok/faithful -> ok/mismatch\s+2", output)
    assert "Dry run: nothing was written" in output
    assert sorted(ids_file.read_text().split()) == sorted([ids["quoted"], ids["elsewhere"]])
    assert await counts(session_factory) == before
    assert await outcome_of(session_factory, ids["quoted"]) == "passed"


async def test_the_scope_is_one_batch_or_a_time(
    session_factory: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    ids = await seed(session_factory)
    output = await asyncio.to_thread(run_cli, database_url, "--batch", BATCH, "--json")
    diff = json.loads(output)
    assert (diff["considered"], diff["changed"], diff["changed_ids"]) == (3, 1, [ids["quoted"]])
    output = await asyncio.to_thread(run_cli, database_url, "--since", "2999-01-01", "--json")
    assert json.loads(output)["considered"] == 0


def test_exactly_one_scope_is_required(database_url: str) -> None:
    for args in ([], ["--all", "--batch", BATCH]):
        result = CliRunner().invoke(cli, ["rescore", *args, "--database-url", database_url])
        assert result.exit_code == 2
        assert "exactly one of --batch ID, --since DATE or --all" in result.output


# --- Applying: new rows, old rows kept ---------------------------------------------------


async def test_applying_over_the_api_adds_rows_and_keeps_the_old_ones(
    api: Api, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    ids = await seed(session_factory)
    response = await api.client.post("/v1/rescore", json={"batch_id": BATCH, "apply": True})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["changed"], body["applied"], body["raced"]) == (1, 1, 0)
    assert body["versions"] == {
        "parser": PARSER_VERSION, "policy": POLICY_VERSION, "evidence": EVIDENCE_VERSION
    }  # fmt: skip
    assert await outcome_of(session_factory, ids["quoted"]) == "flagged"
    assert await outcome_of(session_factory, ids["elsewhere"]) == "passed"  # not in the batch

    async with session_factory() as session:
        rulings = (await session.scalars(select(RulingRow).order_by(RulingRow.id))).all()
        readings = (await session.scalars(select(ReadingRow).order_by(ReadingRow.review_id))).all()
        mine = select(Review).where(Review.screening_id == ids["quoted"]).order_by(Review.id)
        stored = (await session.scalars(mine)).all()
        run = await session.get(Rescore, body["rescore_id"])
    previous, new = rulings
    assert (previous.outcome, previous.rescore_id) == ("passed", None)
    assert previous.parser_version == "naive-0"
    assert (new.outcome, new.rescore_id) == ("flagged", body["rescore_id"])
    assert new.reasons == ["translator_mismatch"]
    assert new.parser_version == PARSER_VERSION
    # Both reviews are read again under the new version; the translator's verdict moved.
    assert [(r.review_id, r.verdict, r.parser_version) for r in readings] == [
        (stored[0].id, "mismatch", PARSER_VERSION), (stored[1].id, "faithful", PARSER_VERSION)
    ]  # fmt: skip
    # The stored reviews are as they were.
    translator = stored[0]
    assert translator.role == "translator"
    assert (translator.verdict, translator.parser_version) == ("faithful", "naive-0")
    assert translator.raw_response == QUOTING
    assert run is not None and run.actor == "anonymous" and run.scope == {"batch_id": BATCH}
    assert run.summary["applied"] == 1

    # The screening's detail shows the new outcome, its history, and the re-reading next
    # to the review it re-read.
    detail = (await api.client.get(f"/v1/screenings/{ids['quoted']}")).json()
    assert detail["outcome"] == "flagged"
    assert [(r["outcome"], r["rescore_id"]) for r in detail["rulings"]] == [
        ("passed", None), ("flagged", body["rescore_id"])
    ]  # fmt: skip
    assert [(r["role"], r["verdict"]) for r in detail["readings"]] == [
        ("translator", "mismatch"), ("judge", "faithful")
    ]  # fmt: skip
    assert detail["reviews"][1]["verdict"] == "faithful"  # the review itself, as stored
    clean = (await api.client.get(f"/v1/screenings/{ids['clean']}")).json()
    assert (clean["rulings"], clean["readings"]) == ([], [])

    # Applied twice: the second run finds nothing to change and writes nothing.
    before = await counts(session_factory)
    again = await api.client.post("/v1/rescore", json={"batch_id": BATCH, "apply": True})
    assert (again.json()["changed"], again.json()["applied"]) == (0, 0)
    assert {k: v for k, v in (await counts(session_factory)).items() if k != "rescores"} == {
        k: v for k, v in before.items() if k != "rescores"
    }


async def test_the_api_wants_exactly_one_scope(api: Api) -> None:
    for body in ({}, {"all": True, "batch_id": BATCH}, {"all": False}):
        response = await api.client.post("/v1/rescore", json=body)
        assert response.status_code == 422, body
        assert "exactly one scope" in response.text


async def test_a_screening_moved_to_needs_review_is_queued(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory() as session:
        moved = await stored_screening(
            session, 5, (UNREADABLE, FAITHFUL), batch_id=None, read=lenient_read
        )
        await session.commit()
    run = await applied(session_factory)
    assert run.diff.as_json()["transitions"] == {"passed -> needs_review": 1}
    assert run.diff.incomplete == 1  # the format retry the new parser wants was never made
    async with session_factory() as session:
        item = (await session.scalars(select(QueueItem))).one()
        report = await summary_report(session, ReportFilters(role="translator"))
    assert (item.screening_id, item.reasons, item.audit) == (moved, ["translator_missing"], False)
    # The report reads the current reading: the re-read reply, not the one stored at first.
    assert report.outcomes == {"passed": 0, "flagged": 0, "needs_review": 1}
    assert {k: v for k, v in report.groups[0].readings.items() if v} == {"unreadable": 1}


# --- A parser change over what the real pipeline stored ----------------------------------


async def test_a_parser_change_is_replayed_and_diffed_without_a_model(
    api: Api, scripted_openai: Any
) -> None:
    """The pipeline screens a batch with the current parser; a changed parser (here the old
    naive one, as a regression would look) is replayed over it: the diff shows exactly the
    outcome that would move, the current parser shows none, and no model is called."""
    scripted_openai.script("n + 1 = 1 + n", model=TRANSLATOR_MODEL, steps=[Reply(QUOTING)])
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[Reply(FAITHFUL)] * 5)
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(FAITHFUL)] * 6)
    items = [{"informal": p.informal, "formal": p.formal} for p in map(pair, range(1, 4))]
    accepted = await api.client.post("/v1/batches", json={"items": items})
    batch = accepted.json()["id"]
    done = await wait_batch_done(api, batch)
    assert done["outcomes"] == {"passed": 2, "flagged": 1, "needs_review": 0}
    calls = len(scripted_openai.requests)

    session_factory = api.runtime.sessions
    same = await dry_run(session_factory, Scope(batch_id=batch))
    assert (same.diff.considered, same.diff.changed) == (3, 0)

    changed = Parser(read=naive_read, version="naive-1")
    summary = (await dry_run(session_factory, Scope(batch_id=batch), changed)).diff.as_json()
    assert summary["transitions"] == {"flagged -> passed": 1}
    assert summary["reasons_removed"] == {"translator_mismatch": 1}
    assert summary["versions"]["parser"] == "naive-1"
    assert len(scripted_openai.requests) == calls


async def test_a_parser_change_without_a_new_version_is_reported_and_not_applied(
    api: Api, scripted_openai: Any
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[Reply(QUOTING)])
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(FAITHFUL)])
    item = {"informal": pair(1).informal, "formal": pair(1).formal}
    accepted = await api.client.post("/v1/batches", json={"items": [item]})
    batch = accepted.json()["id"]
    await wait_batch_done(api, batch)
    session_factory = api.runtime.sessions
    before = await counts(session_factory)
    unbumped = Parser(read=naive_read, version=PARSER_VERSION)
    run = await applied(session_factory, Scope(batch_id=batch), parser=unbumped)
    assert (run.diff.changed, run.diff.unversioned, run.diff.applied) == (1, 1, 0)
    after = await counts(session_factory)
    assert after["rescores"] == before["rescores"] + 1  # the run itself is recorded
    assert {k: after[k] for k in ("readings", "rulings")} == {"readings": 0, "rulings": 0}


# --- Append-only -------------------------------------------------------------------------


@pytest.mark.parametrize("statement", [
    "UPDATE readings SET verdict = 'faithful'",
    "DELETE FROM readings",
    "UPDATE rulings SET outcome = 'passed'",
    "DELETE FROM rulings",
])  # fmt: skip
async def test_readings_and_rulings_refuse_changes_in_raw_sql(
    session_factory: async_sessionmaker[AsyncSession], statement: str
) -> None:
    await seed(session_factory)
    await applied(session_factory)
    async with session_factory() as session:
        with pytest.raises(DBAPIError, match="append-only"):
            await session.execute(text(statement))


async def test_the_current_parser_reproduces_every_path_the_pipeline_took(
    api: Api, scripted_openai: Any
) -> None:
    """Format retries, truncation, confirmations, refusals and provider errors, as the real
    worker stored them: replaying with the installed parser and policy changes nothing."""
    truncated = Reply(FAITHFUL, finish_reason="length")
    script = {
        1: [Reply(UNREADABLE), Reply(FAITHFUL)],  # repaired by a format retry
        2: [Reply(QUOTING), Reply(FAITHFUL)],  # a mismatch, not confirmed
        3: [Reply(QUOTING), Reply(QUOTING)],  # a mismatch, confirmed
        4: [truncated, truncated, truncated],  # retries exhausted
        5: [Reply(None, refusal="I cannot help with that.")],
        6: [HttpError(400)],  # not retried by the client: a provider error
    }
    for n, steps in script.items():
        scripted_openai.script(pair(n).informal, model=TRANSLATOR_MODEL, steps=steps)
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(FAITHFUL)] * len(script))
    items = [
        {"informal": pair(n).informal, "formal": pair(n).formal, "options": {"confirmations": 1}}
        for n in script
    ]
    accepted = await api.client.post("/v1/batches", json={"items": items})
    assert accepted.status_code == 202, accepted.text
    done = await wait_batch_done(api, accepted.json()["id"])
    assert done["outcomes"] == {"passed": 1, "flagged": 1, "needs_review": 4}
    seen = {status for status, n in done["parse_statuses"]["translator"].items() if n}
    assert seen == {"ok", "missing", "truncated", "refused", "provider_error"}

    diff = (await dry_run(api.runtime.sessions, Scope(batch_id=accepted.json()["id"]))).diff
    assert (diff.considered, diff.unchanged, diff.changed, diff.incomplete) == (6, 6, 0, 0)


async def test_retry_settings_changed_since_do_not_move_anything(
    api: Api, scripted_openai: Any
) -> None:
    scripted_openai.script(
        model=TRANSLATOR_MODEL, steps=[Reply(UNREADABLE), Reply(UNREADABLE), Reply(FAITHFUL)]
    )
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(FAITHFUL)])
    item = {"informal": pair(1).informal, "formal": pair(1).formal}
    batch = (await api.client.post("/v1/batches", json={"items": [item]})).json()["id"]
    assert (await wait_batch_done(api, batch))["outcomes"]["passed"] == 1
    for retries in (0, 1, 5):
        run = await rescore(
            api.runtime.sessions, Scope(batch_id=batch), apply=False, actor="t",
            format_retries=retries, audit_rate=0.0,
        )  # fmt: skip
        assert (run.diff.changed, run.diff.incomplete, run.diff.unversioned) == (0, 0, 0)


async def test_supplied_replies_replay_as_they_were_decided(api: Api) -> None:
    replies = [(FAITHFUL, FAITHFUL), (QUOTING, FAITHFUL), (UNREADABLE, FAITHFUL)]
    items = [
        {"informal": pair(n).informal, "formal": pair(n).formal,
         "replies": {"translator": t, "judge": j}}
        for n, (t, j) in enumerate(replies, start=1)
    ]  # fmt: skip
    batch = (await api.client.post("/v1/batches", json={"items": items})).json()["id"]
    done = await wait_batch_done(api, batch)
    assert done["outcomes"] == {"passed": 1, "flagged": 1, "needs_review": 1}
    diff = (await dry_run(api.runtime.sessions, Scope(batch_id=batch))).diff
    assert (diff.considered, diff.unchanged, diff.changed, diff.incomplete) == (3, 3, 0, 0)


async def test_an_unknown_batch_is_404_over_the_api_and_exit_1_in_the_cli(
    api: Api, database_url: str
) -> None:
    missing = "00000000-0000-4000-8000-00000000dead"
    response = await api.client.post("/v1/rescore", json={"batch_id": missing})
    assert response.status_code == 404
    assert f"batch {missing} does not exist" in response.json()["error"]["message"]
    args = ["rescore", "--batch", missing, "--database-url", database_url]
    result = await asyncio.to_thread(CliRunner().invoke, cli, args)
    assert result.exit_code == 1
    assert f"batch {missing} does not exist" in result.output


async def test_cli_apply_restamps_what_stays_and_a_later_unbumped_change_is_caught(
    session_factory: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    async with session_factory() as session:
        kept = await stored_screening(session, 1, (FAITHFUL, FAITHFUL), batch_id=None)
        await session.commit()
    output = await asyncio.to_thread(run_cli, database_url, "--all", "--apply")
    assert "unchanged 1 (of which 1 under new versions), changed 0" in output
    assert "0 outcomes moved, 1 kept under the new versions" in output
    assert await counts(session_factory) | {"queue_items": 0} == {
        "readings": 2, "rulings": 2, "rescores": 1, "reviews": 2, "queue_items": 0
    }  # fmt: skip
    assert await outcome_of(session_factory, kept) == "passed"
    # Every screening in scope now stands under the current versions, so a parser changed
    # without its version shows as such, and is not applied.
    unbumped = Parser(read=naive_read, version=PARSER_VERSION)
    run = await applied(session_factory, parser=unbumped)
    assert (run.diff.unversioned, run.diff.applied, run.diff.restamps_applied) == (1, 0, 0)


async def queued_unreadable(session_factory: async_sessionmaker[AsyncSession]) -> str:
    """A needs_review screening in the queue, stored by a parser that could read nothing
    (the current one reads its translator reply as MISMATCH)."""
    async with session_factory() as session:
        screening_id = await stored_screening(
            session, 1, (QUOTING, FAITHFUL), batch_id=None, outcome="needs_review",
            reasons=("translator_missing",), read=unreadable_read,
        )  # fmt: skip
        new = NewQueueItem(
            screening_id=screening_id, reasons=["translator_missing"], audit=False, batch_id=None
        )
        await queue_items.add(session, new)
        await session.commit()
    return screening_id


async def test_a_waiting_queue_item_takes_the_new_reasons(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    moved = await queued_unreadable(session_factory)
    run = await applied(session_factory, format_retries=0)
    assert run.diff.as_json()["transitions"] == {"needs_review -> flagged": 1}
    async with session_factory() as session:
        item = (await session.scalars(select(QueueItem))).one()
    assert (item.screening_id, item.status, item.reasons) == (
        moved,
        "open",
        ["translator_mismatch"],
    )


async def apply_batch(session_factory: async_sessionmaker[AsyncSession]) -> RescoreRun:
    return await applied(session_factory, Scope(batch_id=BATCH))


async def test_a_screening_changed_meanwhile_is_left_for_the_next_run(
    session_factory: async_sessionmaker[AsyncSession],
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = await seed(session_factory)
    engine = sa.create_engine(sync_url(database_url), poolclass=sa.NullPool)

    def replay_while_someone_writes(*args: Any) -> Any:
        with engine.begin() as connection:  # a person deciding, say: updated_at moves
            connection.execute(
                sa.update(Screening)
                .where(Screening.id == ids["quoted"])
                .values(updated_at=utcnow())
            )
        return replay_all(*args)

    monkeypatch.setattr(service, "_replay_all", replay_while_someone_writes)
    run = await apply_batch(session_factory)
    engine.dispose()
    assert (run.diff.changed, run.diff.applied, run.diff.raced) == (1, 0, 1)
    assert await outcome_of(session_factory, ids["quoted"]) == "passed"
    monkeypatch.setattr(service, "_replay_all", replay_all)
    again = await apply_batch(session_factory)
    assert (again.diff.applied, again.diff.raced) == (1, 0)


async def test_a_run_that_fails_part_way_keeps_its_chunks_and_says_it_failed(
    session_factory: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(session_factory)
    chunks = 0

    def fail_on_the_second_chunk(*args: Any) -> Any:
        nonlocal chunks
        chunks += 1
        if chunks == 2:
            raise RuntimeError("the machine went away")
        return replay_all(*args)

    monkeypatch.setattr(service, "_replay_all", fail_on_the_second_chunk)
    with pytest.raises(RuntimeError, match="went away"):
        await applied(session_factory, chunk=1)
    async with session_factory() as session:
        run = (await session.scalars(select(Rescore))).one()
    assert run.summary["state"] == "failed"
    assert run.summary["considered"] == 1


async def test_the_reviewer_sees_the_history_and_the_re_readings(
    api: Api, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    await queued_unreadable(session_factory)
    response = await api.client.post("/v1/rescore", json={"all": True, "apply": True})
    assert response.json()["applied"] == 1
    item = (await api.client.get("/v1/queue")).json()["items"][0]
    detail = (await api.client.get(f"/v1/queue/{item['id']}")).json()
    assert [r["outcome"] for r in detail["screening"]["rulings"]] == ["needs_review", "flagged"]
    assert detail["reasons"] == ["translator_mismatch"]
    page = await api.client.get(f"/review/items/{item['id']}")
    assert page.status_code == 200, page.text
    assert "Outcome history (re-scoring)" in page.text
    assert page.text.count("Read again by parser") == 2  # translator and judge
    assert f"rescore {response.json()['rescore_id']}" in page.text


async def test_a_screening_queued_by_rescoring_is_sampled_for_double_review(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory() as session:
        await stored_screening(session, 5, (UNREADABLE, FAITHFUL), batch_id=None, read=lenient_read)
        await session.commit()
    await applied(session_factory, double_rate=1.0)
    async with session_factory() as session:
        item = (await session.scalars(select(QueueItem))).one()
    assert item.double_review is True


async def test_an_item_answering_for_two_screenings_takes_both_their_new_reasons(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    first = await queued_unreadable(session_factory)
    async with session_factory() as session:
        joined = await stored_screening(
            session, 1, (FAITHFUL,), batch_id=None, outcome="needs_review",
            reasons=("judge_missing",), read=lenient_read,
        )  # fmt: skip
        new = NewQueueItem(
            screening_id=joined, reasons=["judge_missing"], audit=False, batch_id=None
        )
        await queue_items.add(session, new)
        await session.commit()
    async with session_factory() as session:
        item = (await session.scalars(select(QueueItem))).one()  # the second joined the first
        assert await queue_items.screening_ids(session, [item.id]) == {item.id: [first, joined]}
    run = await applied(session_factory, format_retries=0)
    assert run.diff.as_json()["transitions"] == {"needs_review -> flagged": 1}
    async with session_factory() as session:
        item = (await session.scalars(select(QueueItem))).one()
    # The moved screening's new reasons (not its stale one), and the joined one's as they are.
    assert (item.status, item.reasons) == ("open", ["translator_mismatch", "judge_missing"])
