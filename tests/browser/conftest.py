"""Browser fixtures: Debian's Chromium driven by Playwright, and a `faithscreen serve` with
keys made by the real `faithscreen keys create`.

    browser_page   a Playwright Page in a fresh headless Chromium profile, 1366x768
    shots          a folder (under pytest's tmp dir) for screenshots
    review_server  `faithscreen serve` on `database_url`, auth on, no LLM provider
    make_key       `faithscreen keys create --role ROLE --name NAME` on that database
    site           review_server with keys (alice: reviewer, root: admin) and seeding

Playwright's own browser download is never used (no `playwright install`): the system
Chromium is launched by path. Without it the tests are skipped locally and fail on CI
(CI=true), so a CI image that lost the package cannot pass by skipping.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from tests.support.review_site import MakeKey, ReviewSite, key_of, start_key
from tests.support.serve_process import ServeProcess

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# A laptop screen: the pages must be readable at this size without zooming.
LAPTOP = {"width": 1366, "height": 768}
# Playwright's own timeouts (ms): generous, as a CI machine may be slow to paint.
ACTION_TIMEOUT_MS = 60_000


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a real headless Chromium")


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _missing(reason: str) -> NoReturn:
    if _on_ci():
        pytest.fail(f"{reason}; CI must run the browser tests (.ci/run installs it)")
    pytest.skip(f"{reason} (apt-get install chromium; required when CI=true)")


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[Page]:
    """A page in headless Chromium with a profile of its own: no cookie outlives a test."""
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the `playwright` package is not installed (dev extras)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=LAPTOP,
        )
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "screenshots"
    folder.mkdir()
    return folder


@pytest.fixture
def review_server(database_url: str, tmp_path: Path) -> Iterator[ServeProcess]:
    """Auth on, no provider: screenings are seeded with supplied replies."""
    server = ServeProcess(database_url, {"FAITHSCREEN_AUTH": "on"}, tmp_path / "serve.log")
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def make_key(database_url: str) -> MakeKey:
    return lambda role, name: key_of(start_key(database_url, role, name))


@pytest.fixture
def site(database_url: str, make_key: MakeKey, tmp_path: Path) -> Iterator[ReviewSite]:
    """A server (auth on, no provider) with the keys of alice (reviewer) and root (admin)."""
    keys = [start_key(database_url, "reviewer", "alice"), start_key(database_url, "admin", "root")]
    server = ServeProcess(database_url, {"FAITHSCREEN_AUTH": "on"}, tmp_path / "serve.log")
    try:
        alice, admin = (key_of(process) for process in keys)
        yield ReviewSite(server, database_url, make_key, alice, admin)
    finally:
        server.kill()
