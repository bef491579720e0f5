"""The reviewer's item page for replies in each format, in-process on SQLite and
PostgreSQL: every review shows the format it was asked in (and the grammar decoded by)
beside the reader that read it; a tool or JSON reply's back-translation and issues are
shown as read from the object, as for text; a tool call's arguments are shown (escaped)
where a text reply's content is, since a tool reply usually has none."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from markupsafe import escape

from tests.integration.test_reply_formats import FORMAL, screened, settings_for
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api, StartApi
from tests.support.scripted_formats import TOOL, ToolCallReply, arguments, submit
from tests.support.scripted_openai import Reply, ScriptedOpenAI

BACK = "For each n, adding <zero> to n & gives n."
ISSUES = "The formal side says <b>0 + n</b>, not n + 0."


async def item_page(api: Api, screening_id: str) -> str:
    deadline = time.monotonic() + 30
    items: list[dict[str, Any]] = []
    while not items and time.monotonic() < deadline:
        listing = (await api.client.get("/v1/queue")).json()["items"]
        items = [i for i in listing if i["screening_id"] == screening_id]
        await asyncio.sleep(0.05)  # a poll interval: the item is opened after the screening
    (item,) = items
    response = await api.client.get(f"/review/items/{item['id']}")
    assert response.status_code == 200, response.text
    return response.text


def review_blocks(page: str) -> list[str]:
    """Each review's block of the page, in the page's order."""
    reviews = page.split('<h2 id="reviews-h">Reviews</h2>', 1)[1]
    reviews = reviews.split('<h2 id="trail-h">', 1)[0]
    return reviews.split('<div class="review">')[1:]


def shown_versions(block: str) -> str:
    line = block.split('<p class="muted versions"', 1)[1].split("</p>", 1)[0]
    return " ".join(line.split())


async def test_a_grammar_translator_and_a_tool_judge_each_show_their_format(
    start_api: StartApi, clean_env: None, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    mismatch = arguments("UNCLEAR", None, issues=ISSUES)
    scripted_openai.script(model=JUDGE_MODEL, steps=[ToolCallReply(calls=((TOOL, mismatch),))])
    async with start_api(settings_for(database_url, scripted_openai, "grammar", "tool")) as api:
        body = await screened(api)
        assert body["outcome"] == "needs_review"
        page = await item_page(api, body["id"])

    translator, judge = review_blocks(page)
    assert "reply format <code>grammar</code> (grammar <code>grammar-1</code>) read by " in (
        shown_versions(translator)
    )
    assert "read by <code>contract-4</code>" in shown_versions(translator)
    assert "reply format <code>tool</code> read by <code>tool-1</code>" in shown_versions(judge)
    assert "<dt>reply format</dt><dd>tool</dd>" in judge and "<dt>grammar</dt>" not in judge
    assert "<dt>grammar</dt><dd>grammar-1</dd>" in translator
    # The judge's issues as read from the call's object, escaped like every provider text.
    assert escape(ISSUES) in judge and ISSUES not in page
    # What the model wrote: the arguments, where a text reply's content would be.
    assert "No message content: the reply is the tool call below." in judge
    assert f"Tool call 1: function <code>{TOOL}</code>, its arguments as sent:" in judge
    assert f'<pre class="tool-arguments">{escape(mismatch)}</pre>' in judge


async def test_a_tool_translator_s_back_translation_is_shown_as_for_text(
    start_api: StartApi, clean_env: None, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[submit(back_translation=BACK)])
    scripted_openai.script(
        model=JUDGE_MODEL, steps=[submit("UNCLEAR", translator=False, issues=ISSUES)]
    )
    async with start_api(settings_for(database_url, scripted_openai, "tool", "tool")) as api:
        body = await screened(api)
        page = await item_page(api, body["id"])
    back = page.split('<summary><h2 id="back-h">Back-translation</h2></summary>', 1)[1]
    assert escape(BACK) in back.split("</details>", 1)[0]


async def test_a_json_reply_shows_its_format_reader_and_fields(
    start_api: StartApi, clean_env: None, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[Reply(arguments(back_translation=BACK))])
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(arguments("UNCLEAR", None, ISSUES))])
    async with start_api(settings_for(database_url, scripted_openai, "json", "json")) as api:
        body = await screened(api, formal=FORMAL)
        page = await item_page(api, body["id"])
    blocks: list[Any] = review_blocks(page)
    for block in blocks:
        assert "reply format <code>json</code> read by <code>json-1</code>" in (
            shown_versions(block)
        )
        assert "Tool call" not in block
    assert escape(ISSUES) in blocks[1]
    back = page.split('<summary><h2 id="back-h">Back-translation</h2></summary>', 1)[1]
    assert escape(BACK) in back.split("</details>", 1)[0]
