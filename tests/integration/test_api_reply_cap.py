"""A provider's reply over the cap never passes, and a screening's GET stays bounded
(issue 32, item 2), in-process on SQLite and PostgreSQL: the worker's real client against
the scripted provider, GET /v1/screenings/{id} (and a queue item) showing each long text
cut with a marker and its whole length, and the whole reply behind
GET /v1/screenings/{id}/reviews/{review_id}/raw, under the screening GET's key and
blind-review rules."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.api.shown_text import SHOWN_CHARACTERS
from app.contract.provider_reply import ProviderReply
from app.contract.reading import Reading
from app.models import Review
from app.settings import Settings
from app.vocabulary import Pair, ParseStatus, Verdict
from tests.integration.test_api_screenings import fetch, pair_body, submit, wait_done
from tests.integration.test_review_blind import FLAGGED, Blind, keys, start_blind
from tests.support import rescoring
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api, StartApi
from tests.support.review_queue import bearer, error_code, queue_items
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

CAP = 64 * 1024
# FAITHFUL, from a reply of 2 MB: read whole, the pair would pass.
HUGE_FAITHFUL = contract_reply("FAITHFUL", back_translation="x" * (2 * 1024 * 1024))
JUDGE_FAITHFUL = contract_reply("FAITHFUL", back_translation=None)
# A supplied reply longer than a GET shows (and within what intake allows, here 4 MiB).
LONG_BACK = "".join(f"clause {n}: n + 0 = n; " for n in range(150_000))
LONG_REPLY = contract_reply("FAITHFUL", back_translation=LONG_BACK)


def capped(settings: Settings) -> Settings:
    translator = settings.translator.model_copy(update={"max_response_bytes": CAP})
    return settings.model_copy(update={"translator": translator})


async def stored_reviews(api: Api, screening_id: str) -> list[Review]:
    async with api.runtime.sessions() as session:
        statement = select(Review).where(Review.screening_id == screening_id)
        return list((await session.execute(statement)).scalars())


async def test_a_faithful_reply_over_the_cap_is_cut_at_read_and_the_pair_needs_review(
    start_api: StartApi, configured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[Reply(HUGE_FAITHFUL)] * 6)
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(JUDGE_FAITHFUL)] * 6)
    async with start_api(capped(configured_settings)) as api:
        screening_id = (await submit(api, pair_body()))["id"]
        body = await wait_done(api, screening_id)
        stored = await stored_reviews(api, screening_id)

    assert body["outcome"] == "needs_review"
    assert "translator_provider_error" in body["reasons"]
    translator = [r for r in body["reviews"] if r["role"] == "translator"]
    assert translator and all(r["parse_status"] == "provider_error" for r in translator)
    assert translator[0]["error"].startswith("reply too large: the body is longer than 65536")
    assert translator[0]["raw_response"] is None and translator[0]["verdict"] == "unclear"
    # What was read, stored: the body's beginning, no more than the cap.
    stored_translator = [r for r in stored if r.role == "translator"]
    assert len(stored_translator) == len(translator)  # every call the API shows is stored
    for review in stored_translator:
        assert review.raw_body is not None and 0 < len(review.raw_body) <= CAP
        assert review.raw_body.startswith('{"id": "chatcmpl-scripted-')


@pytest.fixture
async def roomy_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    """Intake takes a supplied reply of up to 4 MiB: the size of a row stored before the
    read cap, or under a cap raised past what a GET shows."""
    roomy = {"max_reply_bytes": 4 * 1024 * 1024, "max_request_bytes": 16 * 1024 * 1024}
    async with start_api(configured_settings.model_copy(update=roomy), with_worker=False) as api:
        yield api


async def test_a_long_stored_reply_is_shown_cut_and_served_whole_at_its_own_endpoint(
    roomy_api: Api,
) -> None:
    replies = {"translator": LONG_REPLY, "judge": JUDGE_FAITHFUL}
    screening_id = (await submit(roomy_api, pair_body(replies=replies)))["id"]
    response = await roomy_api.client.get(f"/v1/screenings/{screening_id}")

    assert response.status_code == 200
    assert len(response.content) < 4 * SHOWN_CHARACTERS  # the reply alone is 3.4 MB
    review = next(r for r in response.json()["reviews"] if r["role"] == "translator")
    raw_path = f"/v1/screenings/{screening_id}/reviews/{review['id']}/raw"
    # The reading strips the back-translation's trailing blank.
    cut = {"raw_response": len(LONG_REPLY), "back_translation": len(LONG_BACK.strip())}
    assert review["cut"] == cut
    shown, marker = review["raw_response"].split("\n[cut by FaithScreen: ")
    assert shown == LONG_REPLY[:SHOWN_CHARACTERS]
    assert marker == (
        f"the first {SHOWN_CHARACTERS} of {len(LONG_REPLY)} characters are shown; "
        f"the whole reply: GET {raw_path}]"
    )
    assert review["back_translation"].startswith(LONG_BACK[:SHOWN_CHARACTERS] + "\n[cut by")
    judge = next(r for r in response.json()["reviews"] if r["role"] == "judge")
    assert judge["cut"] == {} and judge["raw_response"] == JUDGE_FAITHFUL

    whole = await roomy_api.client.get(raw_path)
    assert whole.status_code == 200 and whole.headers["content-type"].startswith("text/plain")
    assert whole.text == LONG_REPLY


async def test_a_queue_item_shows_the_long_reply_cut_too(roomy_api: Api) -> None:
    # Not FAITHFUL: needs_review, so the screening is queued for a person.
    reply = contract_reply("UNSURE", back_translation=LONG_BACK)
    replies = {"translator": reply, "judge": JUDGE_FAITHFUL}
    screening_id = (await submit(roomy_api, pair_body(replies=replies)))["id"]
    [item] = [i for i in await queue_items(roomy_api, None) if i["screening_id"] == screening_id]
    detail = await roomy_api.client.get(f"/v1/queue/{item['id']}")

    assert detail.status_code == 200 and len(detail.content) < 4 * SHOWN_CHARACTERS
    review = next(r for r in detail.json()["screening"]["reviews"] if r["role"] == "translator")
    assert review["cut"]["raw_response"] == len(reply)


def lenient_read(reply: ProviderReply) -> Reading:
    """An old parser that took anything for FAITHFUL (and kept no back-translation)."""
    return Reading(Verdict.FAITHFUL, ParseStatus.OK, None, None, "lenient-0")


async def test_a_rescore_reading_of_a_long_reply_is_shown_cut_too(
    idle_api: Api, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    mismatch = contract_reply("MISMATCH", back_translation=LONG_BACK)
    async with session_factory() as session:
        pair = Pair("For every n, n + 0 = n.", "theorem t (n : ℕ) : n + 0 = n := by sorry", "")
        replies = (mismatch, JUDGE_FAITHFUL)
        screening_id = await rescoring.stored_screening(
            session, pair, "long", replies, read=lenient_read
        )
        await session.commit()
    rescored = await idle_api.client.post("/v1/rescore", json={"all": True, "apply": True})
    assert rescored.status_code == 200 and rescored.json()["applied"] == 1, rescored.text

    response = await idle_api.client.get(f"/v1/screenings/{screening_id}")
    assert response.status_code == 200 and len(response.content) < 4 * SHOWN_CHARACTERS
    body = response.json()
    review = next(r for r in body["reviews"] if r["role"] == "translator")
    reading = next(r for r in body["readings"] if r["role"] == "translator")
    assert reading["verdict"] == "mismatch"
    assert reading["cut"] == {"back_translation": len(LONG_BACK.strip())}
    raw_path = f"/v1/screenings/{screening_id}/reviews/{review['id']}/raw"
    assert reading["back_translation"].endswith(f"the whole reply: GET {raw_path}]")


async def test_the_raw_endpoint_answers_404_for_what_it_does_not_hold(api: Api) -> None:
    replies = {"translator": contract_reply("FAITHFUL"), "judge": JUDGE_FAITHFUL}
    first = (await submit(api, pair_body(replies=replies)))["id"]
    other = (await submit(api, pair_body(replies=replies, external_id="other")))["id"]
    review_id = (await fetch(api, first))["reviews"][0]["id"]

    assert (await api.client.get(f"/v1/screenings/{first}/reviews/{review_id}/raw")).is_success
    for path in (
        f"/v1/screenings/{other}/reviews/{review_id}/raw",  # another screening's review
        f"/v1/screenings/{first}/reviews/{2**62}/raw",
        f"/v1/screenings/no-such/reviews/{review_id}/raw",
        f"/v1/screenings/{first}%00/reviews/{review_id}/raw",
    ):
        assert error_code(await api.client.get(path), 404) == "not_found", path


async def test_a_failed_call_has_no_raw_reply_to_serve(
    start_api: StartApi, configured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[Reply(HUGE_FAITHFUL)] * 6)
    async with start_api(capped(configured_settings)) as api:
        body = await wait_done(api, (await submit(api, pair_body()))["id"])
        review = next(r for r in body["reviews"] if r["role"] == "translator")
        path = f"/v1/screenings/{body['id']}/reviews/{review['id']}/raw"
        response = await api.client.get(path)
    assert error_code(response, 404) == "not_found"
    assert "does not exist" in response.json()["error"]["message"]


@pytest.fixture
async def blind(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Blind]:
    async with await start_blind(start_api, unconfigured_settings) as api:
        yield await keys(api)


async def test_the_raw_reply_of_a_blind_item_is_withheld_from_a_reviewer_until_resolved(
    blind: Blind,
) -> None:
    screening_id = await blind.submit(1, FLAGGED)
    reviews = (await blind.get(blind.admin, f"/v1/screenings/{screening_id}")).json()["reviews"]
    translator = next(r for r in reviews if r["role"] == "translator")
    path = f"/v1/screenings/{screening_id}/reviews/{translator['id']}/raw"

    refused = await blind.get(blind.alice, path)
    assert error_code(refused, 403) == "blind_item"
    assert FLAGGED["translator"] not in refused.text and "MISMATCH" not in refused.text
    for key in (blind.bot, blind.admin):  # the submitter's pipeline, and an admin
        answer = await blind.get(key, path)
        assert answer.status_code == 200 and answer.text == FLAGGED["translator"]
    assert error_code(await blind.api.client.get(path), 401) == "unauthorized"

    item = await blind.item_of(screening_id)
    assert (await blind.post(blind.alice, f"/v1/queue/{item['id']}/claim")).status_code == 200
    decided = await blind.post(
        blind.alice, f"/v1/queue/{item['id']}/decision", {"decision": "mismatch", "note": "n < 0"}
    )
    assert decided.status_code == 201, decided.text
    answer = await blind.api.client.get(path, headers=bearer(blind.alice))
    assert answer.status_code == 200 and answer.text == FLAGGED["translator"]
