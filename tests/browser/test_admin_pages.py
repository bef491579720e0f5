"""The admin pages in headless Chromium against a real `faithscreen serve`: an admin reads
the batches and one batch, creates a key (shown once, and it works on the API) and revokes
it, at 1,400 and 800 px, with axe-core finding no violation at all (of any impact) and no
page scrolling sideways; a reviewer gets the pages' refusal. Screenshots of each page at
each width go to the `shots` folder (FAITHSCREEN_SHOTS to keep them)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.conftest import _missing
from tests.browser.test_review_keys_and_axe import AXE, RUN_AXE
from tests.browser.test_review_workbench import shoot, sign_in
from tests.support.review_site import ReviewSite, pair_body
from tests.support.scripted_openai import contract_reply

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("sqlite")]

# Outside text in a batch's name: shown as text, its bidi control as a marker.
HOSTILE_NAME = "nightly <b>run</b> \u202eevil"
WIDE = "\u202e"
# Wider than the page: the document itself must not scroll sideways.
SIDEWAYS = "() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
MISMATCH = contract_reply("MISMATCH", issues="the bound is wrong")
FAITHFUL = contract_reply("FAITHFUL")


def violations(page: Page) -> list[dict[str, Any]]:
    """Every axe-core violation, whatever its impact."""
    if not AXE.exists():
        _missing(f"{AXE} is not installed (npm ci --prefix tests/browser/axe)")
    page.evaluate(AXE.read_text("utf-8"))
    found: list[dict[str, Any]] = page.evaluate(RUN_AXE)
    return found


def seed_batches(site: ReviewSite) -> list[str]:
    """Two batches decided at once from supplied replies: 2 passed and 1 flagged, and 1."""
    made = []
    for name, replies in ((HOSTILE_NAME, [FAITHFUL, FAITHFUL, MISMATCH]), ("smoke", [FAITHFUL])):
        items = [
            pair_body(
                f"{name[:5]}_{i}".replace(" ", "_"), replies={"translator": r, "judge": FAITHFUL}
            )
            for i, r in enumerate(replies)
        ]
        with site.api(site.admin) as api:
            response = api.post("/v1/batches", json={"items": items}, params={"name": name})
            assert response.status_code == 202, response.text
            made.append(response.json()["id"])
    return made


def check(page: Page, shots: Path, name: str, found: dict[str, Any]) -> None:
    """axe-core's violations and the sideways scroll of the page in view, and a screenshot."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    found[f"{name}-{width}"] = violations(page)
    found[f"{name}-{width}-sideways"] = page.evaluate(SIDEWAYS)
    shoot(page, shots, f"admin-{name}")


def test_an_admin_reads_batches_and_makes_and_revokes_a_key_at_both_widths(
    browser_page: Page, site: ReviewSite, shots: Path
) -> None:
    page = browser_page
    hostile, smoke = seed_batches(site)
    sign_in(page, site, site.admin)
    found: dict[str, Any] = {}
    for width in (1400, 800):
        page.set_viewport_size({"width": width, "height": 1000})
        page.goto(f"{site.base_url}/review/batches")
        page.wait_for_selector("#batches")
        check(page, shots, "batches", found)
        page.click(f"a[href='/review/batches/{hostile}']")
        page.wait_for_selector("#batch-status")
        check(page, shots, "batch", found)
        page.goto(f"{site.base_url}/review/keys")
        page.wait_for_selector("#keys")
        check(page, shots, "keys", found)

    # The batches: newest first, progress and outcomes read off the page as a person would.
    page.goto(f"{site.base_url}/review/batches")
    rows = page.locator("#batches tbody tr")
    assert rows.count() == 2
    assert "smoke" in rows.nth(0).inner_text() and "1 of 1 done" in rows.nth(0).inner_text()
    second = rows.nth(1).inner_text()
    assert "nightly <b>run</b> ⟨U+202E RLO⟩evil" in second and WIDE not in second
    assert "3 of 3 done" in second and re.search(r"passed\s+2", second), second
    # Its page links to its results, the API's lines.
    page.click(f"a[href='/review/batches/{hostile}']")
    assert page.inner_text("#batch-done") == "3 of 3 done"
    assert page.locator("#outcomes").inner_text().split() == [
        "Outcome", "Items", "passed", "2", "flagged", "1", "needs_review", "0",
    ]  # fmt: skip
    with page.expect_download() as download:
        page.click("text=Results (JSONL)")
    lines = [json.loads(line) for line in download.value.path().read_text("utf-8").splitlines()]
    assert [line["outcome"] for line in lines] == ["passed", "passed", "flagged"]
    assert smoke not in {line["id"] for line in lines}

    # A key: created on the page, shown once, working on the API; then revoked.
    page.goto(f"{site.base_url}/review/keys")
    page.fill("#key-name", "ci-pipeline")
    page.select_option("#key-role", "submitter")
    page.click("button:has-text('Create key')")
    page.wait_for_selector("#created")
    key = page.input_value("#new-key")
    assert re.fullmatch(r"fs_[A-Za-z0-9_-]{43}", key)
    for width in (1400, 800):
        page.set_viewport_size({"width": width, "height": 1000})
        check(page, shots, "key-created", found)
    with site.api(key) as api:
        assert api.get(f"/v1/batches/{smoke}").status_code == 200
    page.goto(f"{site.base_url}/review/keys")
    assert key not in page.content()
    row = page.locator("#keys tbody tr", has_text="ci-pipeline")
    row.locator("button:has-text('Revoke')").click()
    page.wait_for_selector("text=Revoked: every request with that key is refused")
    assert "revoked" in page.locator("#keys tbody tr", has_text="ci-pipeline").inner_text()
    check(page, shots, "key-revoked", found)
    with site.api(key) as api:
        assert api.get(f"/v1/batches/{smoke}").status_code == 401

    # A reviewer is refused as on every page a role too low asks for.
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review/keys")
    assert page.inner_text("h1") == "Not allowed"
    assert "needs an admin key" in page.inner_text("main")
    assert page.locator("header a[href='/review/keys']").count() == 0

    problems = {name: value for name, value in found.items() if value}
    assert problems == {}, json.dumps(problems, indent=1)
