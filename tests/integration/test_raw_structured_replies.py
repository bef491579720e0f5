"""GET /v1/screenings/{id}/reviews/{review_id}/raw for replies in the structured formats,
on SQLite and PostgreSQL, through the real client against the scripted provider: a tool
reply's model wrote the call's arguments (its content is usually none), so the endpoint
serves the provider's body as stored, the arguments in it byte for byte; a JSON reply's
object is its content, served as for text; a failed call still has nothing to serve."""

from __future__ import annotations

import json

from tests.integration.test_reply_formats import (
    ODD_ARGUMENTS,
    json_api,  # noqa: F401 (a fixture)
    screened,
    stored_reviews,
    tool_api,  # noqa: F401 (a fixture)
)
from tests.support.in_process_api import JUDGE_MODEL, Api
from tests.support.review_queue import error_code
from tests.support.scripted_formats import TOOL, ToolCallReply, arguments
from tests.support.scripted_openai import HttpError, Reply, ScriptedOpenAI


def raw_path(screening_id: str, review_id: int) -> str:
    return f"/v1/screenings/{screening_id}/reviews/{review_id}/raw"


async def test_a_tool_reply_s_raw_is_the_stored_body_with_the_arguments(
    tool_api: Api,  # noqa: F811
    scripted_openai: ScriptedOpenAI,
) -> None:
    scripted_openai.script(
        model=JUDGE_MODEL,
        steps=[ToolCallReply(calls=((TOOL, ODD_ARGUMENTS),), content="Calling the tool.")],
    )
    body = await screened(tool_api)
    judge = next(r for r in body["reviews"] if r["role"] == "judge")
    stored = {r.id: r for r in await stored_reviews(tool_api, body["id"])}

    response = await tool_api.client.get(raw_path(body["id"], judge["id"]))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.text == stored[judge["id"]].raw_body
    # What the model wrote, exactly as the body holds it, and the content beside it.
    (call,) = json.loads(response.text)["choices"][0]["message"]["tool_calls"]
    assert (call["function"]["name"], call["function"]["arguments"]) == (TOOL, ODD_ARGUMENTS)
    assert json.loads(response.text)["choices"][0]["message"]["content"] == "Calling the tool."

    translator = next(r for r in body["reviews"] if r["role"] == "translator")
    assert stored[translator["id"]].raw_response is None  # no content: it used to be a 404
    whole = await tool_api.client.get(raw_path(body["id"], translator["id"]))
    assert whole.status_code == 200 and whole.text == stored[translator["id"]].raw_body
    (call,) = json.loads(whole.text)["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"])["verdict"] == "FAITHFUL"


async def test_a_failed_tool_call_has_no_raw_reply_to_serve(
    tool_api: Api,  # noqa: F811
    scripted_openai: ScriptedOpenAI,
) -> None:
    scripted_openai.script(model=JUDGE_MODEL, steps=[HttpError(400)] * 8)
    body = await screened(tool_api)
    judge = next(r for r in body["reviews"] if r["role"] == "judge")
    assert judge["parse_status"] == "provider_error" and body["outcome"] != "passed"
    stored = {r.id: r for r in await stored_reviews(tool_api, body["id"])}
    assert stored[judge["id"]].raw_body  # the error body is stored, and is no reply
    response = await tool_api.client.get(raw_path(body["id"], judge["id"]))
    assert error_code(response, 404) == "not_found"


async def test_a_json_reply_s_raw_is_its_content(
    json_api: Api,  # noqa: F811
    scripted_openai: ScriptedOpenAI,
) -> None:
    reply = arguments("MISMATCH", None, issues="n + 0 is not 0 + n")
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(reply)])
    body = await screened(json_api)
    judge = next(r for r in body["reviews"] if r["role"] == "judge")
    assert judge["reply_format"] == "json"
    response = await json_api.client.get(raw_path(body["id"], judge["id"]))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == reply
