"""contract-4: a reply asked for as text (or under a grammar) that holds a tool call is
`invalid`, whatever its text says, on SQLite and PostgreSQL.

contract-3 read such a reply's content alone, so a server that ended a reply with `stop`
while it carried a FAITHFUL contract text beside a `submit_review` call saying MISMATCH
passed the pair: the verdict was read from one of two answers that disagree. Here the
pipeline re-asks such a reply as a format retry and never passes the pair, and a re-score
of a pass stored under contract-3 moves it to `needs_review`, reading the tool calls
again from the stored raw body. No model is called by the re-score.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.contract import PARSER_VERSION, parse_reply
from app.evidence import EVIDENCE_VERSION
from app.policy import POLICY_VERSION
from app.repositories import pairs, reviews, screenings
from app.repositories.rescores import Scope
from app.repositories.reviews import ReviewRecord
from app.settings import Settings
from tests.integration.test_reply_formats import judge_requests
from tests.integration.test_reply_formats import screened as screened_pair
from tests.integration.test_rescore import outcome_of, pair
from tests.support.in_process_api import JUDGE_MODEL, StartApi
from tests.support.rescoring import applied, dry_run
from tests.support.scripted_formats import TOOL, ToolCallReply, arguments
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

JUDGE_FAITHFUL_TEXT = contract_reply("FAITHFUL", back_translation=None)
FAITHFUL = contract_reply("FAITHFUL")
MISMATCH_CALL = arguments("MISMATCH", None, issues="drops the hypothesis n > 0")


def beside(finish_reason: str) -> ToolCallReply:
    """A FAITHFUL contract text beside a `submit_review` call that says MISMATCH."""
    return ToolCallReply(
        calls=((TOOL, MISMATCH_CALL),), content=JUDGE_FAITHFUL_TEXT, finish_reason=finish_reason
    )


@pytest.mark.parametrize("judge_format", ["text", "grammar"])
async def test_a_faithful_text_beside_a_mismatch_tool_call_never_passes(
    start_api: StartApi,
    clean_env: None,
    configured_settings: Settings,
    scripted_openai: ScriptedOpenAI,
    judge_format: str,
) -> None:
    judge = configured_settings.judge.model_copy(update={"reply_format": judge_format})
    settings = configured_settings.model_copy(update={"judge": judge})
    scripted_openai.script(model=JUDGE_MODEL, steps=[beside("stop")] * 3)
    async with start_api(settings) as api:
        body = await screened_pair(api)
    judged = [r for r in body["reviews"] if r["role"] == "judge"]
    # Each reply is a format failure, re-asked within FAITHSCREEN_FORMAT_RETRIES (2).
    assert [(r["parse_status"], r["verdict"], r["purpose"]) for r in judged] == [
        ("invalid", "unclear", "review"),
        ("invalid", "unclear", "format_retry"),
        ("invalid", "unclear", "format_retry"),
    ]
    assert {r["parser_version"] for r in judged} == {PARSER_VERSION}
    assert len(judge_requests(scripted_openai)) == 3
    assert (body["outcome"], body["reasons"]) == ("needs_review", ["judge_invalid"])


async def test_a_format_retry_that_answers_in_text_alone_is_read(
    start_api: StartApi,
    clean_env: None,
    configured_settings: Settings,
    scripted_openai: ScriptedOpenAI,
) -> None:
    # The rule is about the reply, not the pair: the retry's plain contract reply is read.
    scripted_openai.script(model=JUDGE_MODEL, steps=[beside("stop"), Reply(JUDGE_FAITHFUL_TEXT)])
    async with start_api(configured_settings) as api:
        body = await screened_pair(api)
    judged = [r["parse_status"] for r in body["reviews"] if r["role"] == "judge"]
    assert judged == ["invalid", "ok"]
    assert body["outcome"] == "passed"


def completion(content: str, tool_calls: list[dict[str, object]] | None) -> str:
    """A chat completion body as a provider sent it, ended with `stop`."""
    message: dict[str, object] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps({"id": "c", "object": "chat.completion", "choices": [choice]})


SUBMIT_MISMATCH = [
    {"id": "call_1", "type": "function",
     "function": {"name": "submit_review", "arguments": MISMATCH_CALL}},
]  # fmt: skip


async def stored_under_contract_3(
    session: AsyncSession, n: int, judge_tool_calls: list[dict[str, object]] | None
) -> str:
    """A pass as contract-3 stored it: both replies FAITHFUL text ended with `stop`, the
    judge's raw body holding `judge_tool_calls` beside its text."""
    row = await pairs.get_or_create(session, pair(n))
    screening = await screenings.add(
        session, pair_id=row.id, external_id=f"c{n}", batch_id=None, confirmations=0
    )
    await screenings.record_outcome(
        session, screening.id, outcome="passed", reasons=[], evidence=[],
        policy_version=POLICY_VERSION, evidence_version=EVIDENCE_VERSION,
    )  # fmt: skip
    for role, reply, calls in (
        ("translator", FAITHFUL, None),
        ("judge", JUDGE_FAITHFUL_TEXT, judge_tool_calls),
    ):
        read = parse_reply(reply)
        await reviews.add(
            session,
            ReviewRecord(
                screening_id=screening.id, role=role, attempt=1, purpose="review",
                raw_response=reply, raw_body=completion(reply, calls), finish_reason="stop",
                verdict=read.verdict, parse_status=read.parse_status,
                parser_version="contract-3", back_translation=read.back_translation,
                issues=read.issues,
            ),
        )  # fmt: skip
    return screening.id


async def test_a_rescore_moves_a_contract_3_pass_that_carried_a_tool_call(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory() as session:
        beside_id = await stored_under_contract_3(session, 1, SUBMIT_MISMATCH)
        clean_id = await stored_under_contract_3(session, 2, None)
        empty_id = await stored_under_contract_3(session, 3, [])
        await session.commit()

    run = await dry_run(session_factory, Scope())
    assert run.diff.parser_version == PARSER_VERSION
    assert dict(run.diff.transitions) == {"passed -> needs_review": 1}
    assert list(run.diff.changed_ids) == [beside_id]
    assert dict(run.diff.reasons_added) == {"judge_invalid": 1}
    assert dict(run.diff.readings) == {"ok/faithful -> invalid/unclear": 1}
    assert run.diff.incomplete == 1  # the format retry contract-4 asks for was never made

    await applied(session_factory)
    assert await outcome_of(session_factory, beside_id) == "needs_review"
    # No tool call, or an empty list of them: read as before.
    assert await outcome_of(session_factory, clean_id) == "passed"
    assert await outcome_of(session_factory, empty_id) == "passed"
