"""The MCP tools keep a blind item blind (issue 32, item 8): a reviewer's key, over /mcp on
`faithscreen serve`, screens a pair whose queue item is blind to it and is told
`blind_item`, not the new screening's outcome; get_screening of the blind screening is
refused the same way. A submitter's key reads both (its pipeline must not break).

Every unresolved item is blind here (FAITHSCREEN_REVIEW_BLIND=all) and nothing is
audited, so the pair's needs_review screening opens the blind item and the passed one
screened through MCP joins no item: only its pair ties it to the blind one."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.e2e.test_mcp_tools import FIRST_KEY, make_key, over_http, text_of
from tests.support.scripted_openai import ScriptedOpenAI, contract_reply
from tests.support.serve_process import StartServe, provider_env

pytestmark = pytest.mark.one_database("sqlite")

PAIR = {
    "informal": "For every natural number n, n + 0 = n.",
    "formal": "theorem mcp_blind (n : ℕ) : n + 0 = n := by sorry",
}
UNREAD = {"translator": "no verdict in this reply", "judge": contract_reply("FAITHFUL", None)}
PASSING = {"translator": contract_reply("FAITHFUL"), "judge": contract_reply("FAITHFUL", None)}


def test_screen_pair_does_not_tell_a_reviewer_a_blind_pairs_outcome(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> None:
    env = {
        "FAITHSCREEN_AUTH": "on",
        "FAITHSCREEN_REVIEW_BLIND": "all",
        "FAITHSCREEN_AUDIT_RATE": "0",
    }
    serve = start_serve(provider_env(scripted_openai.base_url, **env))
    [admin] = FIRST_KEY.findall(serve.log.read_text())
    reviewer = make_key(serve, admin, "reviewer", "alice")
    submitter = make_key(serve, admin, "submitter", "agent")
    with serve.client() as http:
        posted = http.post(
            "/v1/screenings",
            json=PAIR | {"replies": UNREAD},
            headers={"Authorization": f"Bearer {submitter}"},
        )
    assert posted.status_code == 202, posted.text
    blind_id = posted.json()["id"]
    screen = PAIR | {"replies": PASSING, "wait_seconds": 0}

    async def as_reviewer(client: Client) -> None:
        for tool, arguments in (("screen_pair", screen), ("get_screening", {"id": blind_id})):
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, text_of(result))
            assert "blind_item: " in text_of(result), text_of(result)
            assert "passed" not in text_of(result) and "needs_review" not in text_of(result)

    async def as_submitter(client: Client) -> None:
        outcomes: dict[str, Any] = {}
        for tool, arguments in (("screen_pair", screen), ("get_screening", {"id": blind_id})):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error and result.structured_content is not None, text_of(result)
            outcomes[tool] = result.structured_content["outcome"]
        assert outcomes == {"screen_pair": "passed", "get_screening": "needs_review"}

    over_http(serve, reviewer, as_reviewer)
    over_http(serve, submitter, as_submitter)
