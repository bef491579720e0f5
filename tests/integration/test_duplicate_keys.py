"""A provider body with a key named twice is a failed call, through the real LLM client
against the scripted provider on a real socket, and through the pipeline into the database
(SQLite and PostgreSQL): two `choices`, the first MISMATCH and the last FAITHFUL, passed
before (issue 32, item 3); now the call is a `provider_error` and the pair needs review."""

from __future__ import annotations

from sqlalchemy import select

from app.llm import LLMClient
from app.models import Review, Screening
from app.settings import ProviderSettings
from tests.support.batches import post_batch, wait_batch_done
from tests.support.in_process_api import TRANSLATOR_MODEL, Api
from tests.support.scripted_openai import RawBody, Reply, ScriptedOpenAI
from tests.unit.test_llm_body_duplicate_keys import TWO_CHOICES

MESSAGES = [{"role": "user", "content": "Is the formal statement faithful?"}]
INFORMAL = "For every natural number n, n + 2 = 2 + n."
FORMAL = "theorem two (n : ℕ) : n + 2 = 2 + n := by sorry"


async def test_the_client_reads_two_choices_as_a_malformed_body(
    scripted_openai: ScriptedOpenAI,
) -> None:
    scripted_openai.script(steps=[RawBody(TWO_CHOICES), Reply("not asked")])
    settings = ProviderSettings(base_url=scripted_openai.base_url, model="m")
    async with LLMClient(settings, concurrency=1) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None
    assert result.error.startswith("malformed body: duplicate key 'choices'")
    assert (result.content, result.finish_reason, result.attempts) == (None, None, 1)
    assert (result.http_status, result.raw_body) == (200, TWO_CHOICES)


async def test_a_pair_whose_translator_sent_two_choices_does_not_pass(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(INFORMAL, model=TRANSLATOR_MODEL, steps=[RawBody(TWO_CHOICES)])
    batch = await post_batch(api, [{"informal": INFORMAL, "formal": FORMAL}])
    done = await wait_batch_done(api, batch["id"])
    assert done["outcomes"]["passed"] == 0, done
    async with api.runtime.sessions() as session:
        screening = (await session.scalars(select(Screening))).one()
        translator = (
            await session.scalars(select(Review).where(Review.role == "translator"))
        ).all()
    assert (screening.outcome, screening.reasons) == ("needs_review", ["translator_provider_error"])
    [review] = translator  # a malformed body is not asked again
    assert (review.parse_status, review.verdict) == ("provider_error", "unclear")
    assert review.raw_body == TWO_CHOICES  # kept as sent, for a person to see
    assert review.raw_response is None
