"""Every string a provider sends is stored on SQLite and PostgreSQL, whatever it holds
(issue 32, item 10): U+0000 (which PostgreSQL text cannot hold), lone surrogates (which no
UTF-8 text can hold; JSON sends them as \\ud800 escapes) and 10 KB values. Before, a model
name holding U+0000 or a 204-character finish_reason ended the pair `job_failed` on
PostgreSQL, its replies never stored; a lone surrogate did so on both.

The raw body is stored exactly; the parsed fields exactly too, except that a lone surrogate
becomes U+FFFD (JSON and pages cannot carry one; the raw body keeps its escape) and a
finish_reason over its column's 64 characters is cut with a mark (the raw body has it
whole). Rows written before the escaping read as they did (app/db/types.py).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.types import CUT_MARK, ESCAPED
from app.models import Job
from app.repositories import jobs, pairs, reviews, screenings
from app.repositories.reviews import ReviewRecord
from app.vocabulary import Pair
from tests.support.in_process_api import JUDGE_MODEL, Api
from tests.support.scripted_openai import (
    HttpError,
    RecordedRequest,
    Reply,
    ScriptedOpenAI,
    Step,
    contract_reply,
)

Sessions = async_sessionmaker[AsyncSession]
NUL = "a\x00b"
SURROGATE = "x\ud800y\udfffz"
TEN_KB = "\u00e9\\" * 5120  # 10 KB of characters, half of them backslashes (the escape)
LOOKS_ESCAPED = ESCAPED + "\\0 is not U+0000 here"  # begins like an escaped value
VALUES = {"nul": NUL, "surrogate": SURROGATE, "ten_kb": TEN_KB, "looks_escaped": LOOKS_ESCAPED}
PARSED = ("back_translation", "issues", "refusal", "model", "error")
DEADLINE_SECONDS = 120.0


def shown(value: str) -> str:
    """A parsed field as stored and read back: lone surrogates as U+FFFD."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)


async def a_screening(sessions: Sessions, marker: str) -> str:
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", f"theorem {marker} : 0 = 0"))
        screening = await screenings.add(
            session, pair_id=pair.id, external_id=marker, batch_id=None, confirmations=0
        )
        await jobs.enqueue(session, screening.id)
        await session.commit()
        return screening.id


def record(screening_id: str, attempt: int, value: str, finish_reason: str) -> ReviewRecord:
    fields = dict.fromkeys(PARSED, value)
    return ReviewRecord(
        raw_response=value,
        screening_id=screening_id,
        role="judge",
        attempt=attempt,
        purpose="review",
        verdict="unclear",
        parse_status="invalid",
        parser_version="test",
        raw_body=value,
        finish_reason=finish_reason,
        **fields,
    )


# --- Through the repository: each field, each kind of value -------------------------------


@pytest.mark.parametrize("kind", VALUES)
async def test_each_provider_field_is_stored_and_read_back(
    session_factory: Sessions, kind: str
) -> None:
    value = VALUES[kind]
    screening_id = await a_screening(session_factory, f"strings_{kind}")
    short = value[:40]  # within finish_reason's 64 characters, escaped or not
    async with session_factory() as session:
        assert await reviews.add(session, record(screening_id, 1, value, short))
        await session.commit()
    async with session_factory() as session:
        [stored] = await reviews.for_screening(session, screening_id)
    # Compared as ascii(): a failure's report must not carry a lone surrogate, which
    # pytest-xdist cannot send from its worker.
    assert ascii(stored.raw_body) == ascii(value)  # the body exactly, surrogates included
    assert ascii(stored.raw_response) == ascii(value)  # and the reply: a re-score reads it
    for field in PARSED:
        assert ascii(getattr(stored, field)) == ascii(shown(value)), field
    assert ascii(stored.finish_reason) == ascii(shown(short))


@pytest.mark.parametrize(
    "finish_reason",
    ["stop" * 51, "\x00" * 204, "\ud800" * 100, ESCAPED + "s" * 300],
    ids=["stop_x51", "nul_x204", "surrogate_x100", "escaped_300"],
)
async def test_a_finish_reason_over_its_column_is_cut_with_a_mark(
    session_factory: Sessions, finish_reason: str
) -> None:
    screening_id = await a_screening(session_factory, "long_finish")
    async with session_factory() as session:
        assert await reviews.add(session, record(screening_id, 1, "x", finish_reason))
        await session.commit()
    async with session_factory() as session:
        [stored] = await reviews.for_screening(session, screening_id)
        column = await session.execute(sa.text("SELECT finish_reason FROM reviews"))
        [[in_column]] = column.all()
    mark = CUT_MARK.format(len(finish_reason))
    assert stored.finish_reason is not None and stored.finish_reason.endswith(mark)
    kept = stored.finish_reason.removesuffix(mark)
    assert shown(finish_reason).startswith(kept), ascii(kept)
    assert len(in_column) <= 64


@pytest.mark.parametrize(
    "old",
    [
        "plain text, a backslash \\0 and \\\\ as written",
        ESCAPED + "a U+FDD0 then a lone backslash \\ (not the escaped form)",
        ESCAPED,
        "",
    ],
)
async def test_rows_written_before_read_as_they_were(session_factory: Sessions, old: str) -> None:
    """Stored by plain SQL, as before the escaping: read back unchanged."""
    screening_id = await a_screening(session_factory, "old_row")
    async with session_factory() as session:
        statement = sa.text("UPDATE jobs SET last_error = :old WHERE screening_id = :id")
        await session.execute(statement, {"old": old, "id": screening_id})
        await session.commit()
    async with session_factory() as session:
        job = (await session.execute(sa.select(Job))).scalar_one()
    assert job.last_error == old


# --- Through the worker: the pair ends with its replies stored ------------------------------

JUDGE_FAITHFUL = contract_reply("FAITHFUL", back_translation=None)


def clean_reply(request: RecordedRequest) -> Step:
    judge = request.model == JUDGE_MODEL
    return Reply(contract_reply("FAITHFUL", back_translation=None if judge else "n + 0 = n"))


@dataclass(frozen=True)
class Case:
    name: str
    step: Step
    # The judge's stored review (as GET shows it) and its raw body, parsed as JSON.
    check: Callable[[dict[str, Any], Any], None]
    may_pass: bool = True


def _model(value: str) -> Case:
    def check(review: dict[str, Any], body: Any) -> None:
        assert body["model"] == value and review["model"] == shown(value)

    return Case(f"model_{len(value)}", Reply(JUDGE_FAITHFUL, model=value), check)


def _finish(value: str) -> Case:
    def check(review: dict[str, Any], body: Any) -> None:
        assert body["choices"][0]["finish_reason"] == value
        stored = review["finish_reason"]
        assert stored == shown(value) or stored.endswith(CUT_MARK.format(len(value)))

    # A finish reason that is not a listed completion never passes (item 1).
    return Case(f"finish_{len(value)}", Reply(JUDGE_FAITHFUL, finish_reason=value), check, False)


def _content(value: str) -> Case:
    content = JUDGE_FAITHFUL.replace("ISSUES: none", f"ISSUES: {value}")

    def check(review: dict[str, Any], body: Any) -> None:
        assert body["choices"][0]["message"]["content"] == content
        assert review["raw_response"] == shown(content)

    return Case(f"content_{len(value)}", Reply(content), check)


def _refusal(value: str) -> Case:
    def check(review: dict[str, Any], body: Any) -> None:
        assert body["choices"][0]["message"]["refusal"] == value
        assert review["refusal"] == shown(value) and review["parse_status"] == "refused"

    return Case(f"refusal_{len(value)}", Reply(JUDGE_FAITHFUL, refusal=value), check, False)


def _error(value: str) -> Case:
    def check(review: dict[str, Any], body: Any) -> None:
        assert body == value and review["parse_status"] == "provider_error"
        assert review["error"].startswith(f"HTTP 400: {shown(value)}")

    return Case(f"error_{len(value)}", HttpError(400, body=value), check, False)


# A value of each kind in each provider field; 10 KB errors are cut to an excerpt anyway.
CASES = [
    *(make(v) for make in (_model, _finish) for v in (NUL, SURROGATE, TEN_KB)),
    *(make(v) for make in (_content, _refusal) for v in (SURROGATE, TEN_KB)),
    _finish("stop" * 51),
]
# U+0000 in the reply's content, refusal or error text: stored exactly too (the pipeline
# once replaced it with U+FFFD, before the columns could hold it).
NUL_CASES = [_content(NUL), _refusal(NUL), _error(NUL)]


async def screened(api: Api, screening_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        response = await api.client.get(f"/v1/screenings/{screening_id}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if body["status"] == "done":
            return body
        assert time.monotonic() < deadline, f"not screened within {DEADLINE_SECONDS} s"
        await asyncio.sleep(0.05)


async def raw_bodies(api: Api, screening_id: str) -> list[str | None]:
    async with api.runtime.sessions() as session:
        stored = await reviews.for_screening(session, screening_id)
    return [review.raw_body for review in stored if review.role == "judge"]


async def test_every_provider_string_ends_stored_through_the_worker(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    await screen_and_check(api, scripted_openai, CASES)


async def test_nul_in_content_refusal_and_error_is_stored_exactly_through_the_worker(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    await screen_and_check(api, scripted_openai, NUL_CASES)


async def screen_and_check(api: Api, scripted_openai: ScriptedOpenAI, cases: list[Case]) -> None:
    scripted_openai.default = clean_reply
    ids = []
    for number, case in enumerate(cases):
        marker = f"case_{number}_{case.name}"
        # As often as the pipeline asks again (format retries): the same answer each time.
        scripted_openai.script(marker, model=JUDGE_MODEL, steps=[case.step] * 8)
        item = {"informal": f"{marker}: 0 = 0", "formal": f"theorem {marker} : 0 = 0"}
        response = await api.client.post("/v1/screenings", json=item)
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])
    for case, screening_id in zip(cases, ids, strict=True):
        body = await screened(api, screening_id)
        assert "job_failed" not in body["reasons"], (case.name, body["error"])
        if not case.may_pass:
            assert body["outcome"] != "passed", case.name
        judge = [review for review in body["reviews"] if review["role"] == "judge"]
        raw = await raw_bodies(api, screening_id)
        assert judge and len(raw) == len(judge), case.name
        for review, raw_body in zip(judge, raw, strict=True):
            assert raw_body is not None, case.name
            parsed = json.loads(raw_body) if raw_body.startswith("{") else raw_body
            try:
                case.check(review, parsed)
            except AssertionError as failed:  # ascii(): see the first test
                raise AssertionError(ascii(f"{case.name}: {failed}")) from None
