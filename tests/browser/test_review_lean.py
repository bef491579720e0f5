"""The item page shows a screening's Lean check (issue 34), in a real headless Chromium
against a real `faithscreen serve` whose worker asks a scripted Kimina Lean Server
(recorded answers, tests/data/kimina) and the scripted provider: an error is marked at its
line and column in the Lean box and listed with its message; an elaborated goal is shown
under the statement."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL
from tests.support.review_site import FORMAL, HEADER, INFORMAL
from tests.support.scripted_kimina import Recorded, ScriptedKimina
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.serve_process import ServeProcess

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("sqlite")]

NOT_ELABORATED = "example : (2 : ℕ) / 4 = 0.5 := by sorry"


@pytest.fixture
def lean_site(database_url: str, tmp_path: Path) -> Iterator[tuple[ServeProcess, ScriptedKimina]]:
    with ScriptedOpenAI() as provider, ScriptedKimina() as kimina:
        kimina.script_code("(2 : ℕ) / 4", [Recorded("type_mismatch.json")])
        env = {
            "FAITHSCREEN_TRANSLATOR_BASE_URL": provider.base_url,
            "FAITHSCREEN_TRANSLATOR_MODEL": TRANSLATOR_MODEL,
            "FAITHSCREEN_JUDGE_BASE_URL": provider.base_url,
            "FAITHSCREEN_JUDGE_MODEL": JUDGE_MODEL,
            "FAITHSCREEN_LEAN_SERVER_URL": kimina.base_url,
            # Every outcome is queued and shown whole, so the page has both screenings.
            "FAITHSCREEN_AUDIT_RATE": "1",
            "FAITHSCREEN_REVIEW_BLIND": "off",
        }
        server = ServeProcess(database_url, env, tmp_path / "serve.log")
        try:
            yield server, kimina
        finally:
            server.kill()


def queued_item(api: httpx2.Client, body: dict[str, Any]) -> int:
    screening_id = api.post("/v1/screenings", json=body).json()["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        items = api.get("/v1/queue", params={"limit": 500}).json()["items"]
        found = [i["id"] for i in items if i["screening_id"] == screening_id]
        if found:
            return int(found[0])
        time.sleep(0.1)  # a poll interval, not a wait for the work
    raise AssertionError(f"screening {screening_id} never reached the queue")


def test_the_item_page_marks_lean_errors_and_shows_the_elaborated_goal(
    browser_page: Page, lean_site: tuple[ServeProcess, ScriptedKimina], shots: Path
) -> None:
    server, _ = lean_site
    with httpx2.Client(base_url=server.base_url, timeout=30) as api:
        failed = queued_item(
            api, {"informal": "Two divided by four is one half.", "formal": NOT_ELABORATED}
        )
        elaborated = queued_item(api, {"informal": INFORMAL, "formal": FORMAL, "header": HEADER})
    page = browser_page
    page.goto(f"{server.base_url}/review/items/{failed}")
    page.wait_for_selector("#lean-check")
    assert page.text_content("#lean-status") == "error"
    mark = page.locator("#lean-formal mark.lean-error")
    assert mark.count() == 1
    assert mark.inner_text() == "example"  # columns 0-7 of line 1, as Lean said
    assert "(kernel) application type mismatch" in (mark.get_attribute("title") or "")
    listed = page.inner_text("#lean-messages")
    assert "formal, line 1, columns 1-7" in listed
    assert "error:\n(kernel) application type mismatch\n  @Eq.ndrec" in listed
    page.click("#lean-messages button.go-span")
    assert "current" in (mark.get_attribute("class") or "")
    page.screenshot(path=str(shots / "lean-error-1366x768.png"), full_page=True)

    page.goto(f"{server.base_url}/review/items/{elaborated}")
    page.wait_for_selector("#lean-check")
    assert page.text_content("#lean-status") == "ok"
    assert page.inner_text("#lean-goal") == "x : Int\n⊢ x = x"
    assert page.locator("#lean-formal mark.lean-error").count() == 0
    page.screenshot(path=str(shots / "lean-goal-1366x768.png"), full_page=True)
