"""Bidi controls through the real API and the review pages (issue 32, item 4), on SQLite and
PostgreSQL: a pair with U+202E in the Lean and two FAITHFUL replies (supplied, or from the
scripted provider through the worker) needs review with a `bidi_control` finding that
points at the character, and its review page shows every control, in the statements and
in outside text (a back-translation, an external id), as a marker, never as itself."""

from __future__ import annotations

from typing import Any

from app.evidence.bidi_controls import BIDI_CONTROL
from tests.integration.test_api_screenings import fetch, replies, submit, wait_done
from tests.support.in_process_api import Api
from tests.support.scripted_openai import contract_reply

INFORMAL = "Show that a < b for \u200fall natural numbers a < b."
FORMAL = "theorem t (a b : ℕ) (h : a < b) :\n  \u202eb < a\u202c := by sorry"
HEADER = "import Mathlib\nopen\u2066 Nat"
RLO_MARK = '<mark class="bidi" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E RLO⟩</mark>'


def body(**extra: Any) -> dict[str, Any]:
    return {"informal": INFORMAL, "formal": FORMAL, "header": HEADER, **extra}


def assert_needs_review_for_the_controls(screening: dict[str, Any]) -> None:
    assert screening["outcome"] == "needs_review"
    assert screening["reasons"] == ["evidence_review", "evidence_review:bidi_control"]
    found = [(f["field"], f["line"], f["column"], f["end_column"]) for f in screening["evidence"]]
    assert found == [
        ("informal", 1, 20, 21),
        ("formal", 2, 2, 3),
        ("formal", 2, 8, 9),
        ("header", 2, 4, 5),
    ]
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in screening["evidence"][1]["message"]


async def test_two_supplied_faithful_replies_do_not_pass_a_pair_holding_a_control(
    idle_api: Api,
) -> None:
    accepted = await submit(idle_api, body(replies=replies()))
    assert_needs_review_for_the_controls(await fetch(idle_api, accepted["id"]))


async def test_two_faithful_replies_from_the_provider_do_not_pass_it_either(api: Api) -> None:
    accepted = await submit(api, body(external_id="through-the-worker"))
    screening = await wait_done(api, accepted["id"])
    assert {r["verdict"] for r in screening["reviews"]} == {"faithful"}
    assert_needs_review_for_the_controls(screening)


async def test_the_review_page_shows_every_control_as_a_marker_never_as_itself(
    idle_api: Api,
) -> None:
    quoting = contract_reply("FAITHFUL", back_translation="For a < b, \u202eb < a\u202c holds.")
    accepted = await submit(idle_api, body(replies=replies(quoting), external_id="ext\u2067-1"))
    listing = (await idle_api.client.get("/v1/queue")).json()["items"]
    [item_id] = [i["id"] for i in listing if i["screening_id"] == accepted["id"]]
    page = (await idle_api.client.get(f"/review/items/{item_id}")).text
    assert BIDI_CONTROL.search(page) is None
    # In the statements, each marker sits inside its finding's highlight (`mark.span`).
    assert f'{RLO_MARK}</mark>b &lt; a<mark class="span severity-review"' in page  # the Lean
    assert "⟨U+200F RLM⟩</mark></mark>all natural numbers" in page  # the informal statement
    assert '<mark class="bidi" title="U+2066 LEFT-TO-RIGHT ISOLATE">' in page  # the header
    assert "For a &lt; b, ⟨U+202E RLO⟩b &lt; a⟨U+202C PDF⟩ holds." in page  # the model's
    assert "ext⟨U+2067 RLI⟩-1" in page
    queue = (await idle_api.client.get("/review")).text
    assert BIDI_CONTROL.search(queue) is None and "⟨U+202E RLO⟩b &lt; a" not in queue
