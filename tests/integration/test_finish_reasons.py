"""A provider's reply counts only after a finish reason the contract lists as a completion
(contract-3, app/contract/call.py), through the real pipeline: the LLM client against the
scripted provider on a real socket, into the database (SQLite and PostgreSQL).

Under contract-2 a FAITHFUL reply ending with `error`, `model_length`, `max_tokens`,
`LENGTH` or no reason at all passed (issue 32, item 1). Now each is `truncated`, re-asked
within the format-retry budget, and the pair never passes on it; the raw reason is stored
as sent. Supplied replies, which have no finish reason, still pass."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.models import Review, Screening
from app.vocabulary import Pair
from tests.support.batches import post_batch, wait_batch_done
from tests.support.in_process_api import TRANSLATOR_MODEL, Api
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

FAITHFUL = contract_reply("FAITHFUL")
# Seen to pass under contract-2; none is a completion in the contract's table.
NOT_COMPLETE = ("error", "model_length", "max_tokens", "LENGTH", None)


def pair(n: int) -> Pair:
    informal = f"For every natural number n, n * {n} = {n} * n."
    return Pair(informal, f"theorem m{n} (n : ℕ) : n * {n} = {n} * n := by sorry")


def item(n: int, **extra: Any) -> dict[str, Any]:
    base = {"informal": pair(n).informal, "formal": pair(n).formal, "external_id": f"p{n}"}
    return base | extra


async def stored(api: Api) -> dict[str, tuple[Screening, list[Review]]]:
    """Every screening by external id, with its translator's reviews in attempt order."""
    async with api.runtime.sessions() as session:
        rows = (await session.scalars(select(Screening))).all()
        reviews = (await session.scalars(select(Review).order_by(Review.attempt))).all()
    return {
        str(s.external_id): (
            s,
            [r for r in reviews if r.screening_id == s.id and r.role == "translator"],
        )
        for s in rows
    }


async def test_a_faithful_reply_without_a_listed_completion_never_passes(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    for n, reason in enumerate(NOT_COMPLETE, start=1):
        # The review and both format retries: every reply FAITHFUL, never a completion.
        steps = [Reply(FAITHFUL, finish_reason=reason)] * 3
        scripted_openai.script(pair(n).informal, model=TRANSLATOR_MODEL, steps=steps)
    batch = await post_batch(api, [item(n) for n in range(1, len(NOT_COMPLETE) + 1)])
    await wait_batch_done(api, batch["id"])

    screenings = await stored(api)
    for n, reason in enumerate(NOT_COMPLETE, start=1):
        screening, translator = screenings[f"p{n}"]
        assert (screening.outcome, screening.reasons) == ("needs_review", ["translator_truncated"])
        assert [r.purpose for r in translator] == ["review", "format_retry", "format_retry"]
        assert {(r.parse_status, r.verdict) for r in translator} == {("truncated", "unclear")}
        # The reason is stored exactly as the provider sent it; the text fields are kept.
        assert [r.finish_reason for r in translator] == [reason] * 3
        assert translator[0].back_translation and translator[0].raw_response == FAITHFUL
        assert {r.parser_version for r in translator} == {"contract-4"}


async def test_a_retry_that_completes_passes_and_supplied_replies_still_pass(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    steps = [Reply(FAITHFUL, finish_reason="error"), Reply(FAITHFUL, finish_reason="stop")]
    scripted_openai.script(pair(1).informal, model=TRANSLATOR_MODEL, steps=steps)
    supplied = {"replies": {"translator": FAITHFUL, "judge": FAITHFUL}}
    batch = await post_batch(api, [item(1), item(2, **supplied)])
    done = await wait_batch_done(api, batch["id"])
    assert done["outcomes"]["passed"] == 2, done

    screenings = await stored(api)
    _, retried = screenings["p1"]
    assert [(r.finish_reason, r.parse_status) for r in retried] == [
        ("error", "truncated"), ("stop", "ok")
    ]  # fmt: skip
    _, given = screenings["p2"]
    assert [(r.supplied, r.finish_reason, r.parse_status) for r in given] == [(True, None, "ok")]
