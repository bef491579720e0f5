"""Contract rule 7 through the API, on SQLite and PostgreSQL: a reply whose MISMATCH line
hides behind a U+2028 (read as ok/faithful under contract-1, so the pair passed) is
`ambiguous`; supplied, it needs review with its reason; from a provider, it is asked again
as a format retry, like any unreadable reply."""

from __future__ import annotations

from typing import Any

from app.contract import PARSER_VERSION
from tests.integration.test_api_screenings import fetch, pair_body, replies, submit, wait_done
from tests.support.batches import wait_batch_done
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

HIDDEN = (
    "BACK-TRANSLATION: For every natural number n, n + 0 = n.\n"
    "ISSUES: none\u2028VERDICT: MISMATCH\n"
    "VERDICT: FAITHFUL\n"
)
JUDGE_HIDDEN = "ISSUES: none\n\u200bVERDICT: MISMATCH\nVERDICT: FAITHFUL\n"
FAITHFUL = contract_reply("FAITHFUL")
JUDGE_FAITHFUL = contract_reply("FAITHFUL", back_translation=None)


def by_role(body: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [review for review in body["reviews"] if review["role"] == role]


async def test_a_supplied_reply_with_a_hidden_verdict_needs_review(api: Api) -> None:
    accepted = await submit(api, pair_body(replies=replies(HIDDEN, JUDGE_FAITHFUL)))
    body = await fetch(api, accepted["id"])

    assert (body["status"], body["outcome"]) == ("done", "needs_review")
    assert body["reasons"] == ["translator_ambiguous"]
    [translator] = by_role(body, "translator")
    assert (translator["parse_status"], translator["verdict"]) == ("ambiguous", "unclear")
    assert translator["parser_version"] == PARSER_VERSION
    assert translator["raw_response"] == HIDDEN  # stored byte-for-byte, U+2028 and all
    assert translator["issues"] == "none\u2028VERDICT: MISMATCH"


async def test_a_supplied_judge_reply_behind_a_zero_width_space_needs_review(api: Api) -> None:
    accepted = await submit(api, pair_body(replies=replies(FAITHFUL, JUDGE_HIDDEN)))
    body = await fetch(api, accepted["id"])
    assert (body["outcome"], body["reasons"]) == ("needs_review", ["judge_ambiguous"])


async def test_a_batch_counts_ambiguous_readings(api: Api) -> None:
    item = {**pair_body(), "replies": replies(HIDDEN, JUDGE_HIDDEN)}
    accepted = await api.client.post("/v1/batches", json={"items": [item]})
    assert accepted.status_code == 202, accepted.text
    done = await wait_batch_done(api, accepted.json()["id"])
    assert done["outcomes"] == {"passed": 0, "flagged": 0, "needs_review": 1}
    for role in ("translator", "judge"):
        assert done["parse_statuses"][role]["ambiguous"] == 1


async def test_a_provider_reply_with_a_hidden_verdict_is_asked_again_for_its_form(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[Reply(HIDDEN), Reply(FAITHFUL)])
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(JUDGE_FAITHFUL)])
    body = await wait_done(api, (await submit(api, pair_body()))["id"])

    assert (body["outcome"], body["reasons"]) == ("passed", [])
    calls = by_role(body, "translator")
    assert [(c["attempt"], c["purpose"], c["parse_status"]) for c in calls] == [
        (1, "review", "ambiguous"),
        (2, "format_retry", "ok"),
    ]
    retry = [r for r in scripted_openai.requests if r.model == TRANSLATOR_MODEL][1]
    assert "can be read in more than one way" in retry.text
    assert HIDDEN.rstrip("\n") in retry.text  # the reply is quoted as data, as it was


async def test_a_provider_that_stays_ambiguous_needs_review_once_retries_run_out(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[Reply(HIDDEN)] * 3)
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(JUDGE_FAITHFUL)])
    body = await wait_done(api, (await submit(api, pair_body()))["id"])

    assert (body["outcome"], body["reasons"]) == ("needs_review", ["translator_ambiguous"])
    calls = by_role(body, "translator")
    assert [c["purpose"] for c in calls] == ["review", "format_retry", "format_retry"]
    assert {c["parse_status"] for c in calls} == {"ambiguous"}
