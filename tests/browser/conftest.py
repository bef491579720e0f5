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
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import httpx2
import pytest

from tests.support.scripted_openai import contract_reply
from tests.support.serve_process import FAITHSCREEN, ServeProcess

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
ACTION_TIMEOUT_MS = 15_000

MakeKey = Callable[[str, str], str]


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


def cli_env(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    return env | {"FAITHSCREEN_DATABASE_URL": database_url}


def run_cli(database_url: str, *args: str) -> str:
    """`faithscreen ARGS` on this database; its output (it must succeed)."""
    done = subprocess.run(
        [FAITHSCREEN, *args], env=cli_env(database_url), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def start_key(database_url: str, role: str, name: str) -> subprocess.Popen[str]:
    """`faithscreen keys create` started, not awaited: a CLI process spends most of its
    time importing, so a test starts its keys and its server side by side."""
    command = [FAITHSCREEN, "keys", "create", "--role", role, "--name", name]
    return subprocess.Popen(
        command,
        env=cli_env(database_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def key_of(process: subprocess.Popen[str]) -> str:
    """The key is the last line of `keys create`'s output."""
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, out + err
    return out.strip().splitlines()[-1].strip()


@pytest.fixture
def make_key(database_url: str) -> MakeKey:
    return lambda role, name: key_of(start_key(database_url, role, name))


# A pair a reviewer must read exactly: Unicode mathematics, subscripts, a header, and a
# line far longer than the page is wide.
HEADER = "import Mathlib\nopen BigOperators Real Nat Topology"
FORMAL = (
    "theorem sum_range_id (n : ℕ) (h₀ : 0 < n) : ∑ i ∈ Finset.range (n + 1), (i : ℝ) = "
    "n * (n + 1) / 2 ∧ ∀ m : ℕ, m ≤ n → ⌊(m : ℝ) / 2⌋ ≤ m := by sorry"
)
INFORMAL = "Show that 0 + 1 + ⋯ + n = n(n+1)/2 for every positive natural number n."
# Replies that give needs_review: the translator says UNCLEAR, the judge is unreadable.
UNCLEAR = contract_reply("UNCLEAR", back_translation="The sum of the first n numbers.")
UNREADABLE = "Looks right to me."


def pair_body(marker: str, **extra: Any) -> dict[str, Any]:
    return {
        "informal": INFORMAL,
        "formal": FORMAL.replace("sum_range_id", marker),
        "header": HEADER,
        "external_id": marker,
        "replies": {"translator": UNCLEAR, "judge": UNREADABLE},
        **extra,
    }


@dataclass
class ReviewSite:
    """A running server with a reviewer (alice) and an admin (root) key."""

    server: ServeProcess
    database_url: str
    make_key: MakeKey
    alice: str
    admin: str

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def api(self, key: str) -> httpx2.Client:
        headers = {"Authorization": f"Bearer {key}"}
        return httpx2.Client(base_url=self.base_url, headers=headers, timeout=30)

    def seed(self, marker: str, **extra: Any) -> int:
        """A needs_review screening, decided at once; returns its queue item's id."""
        with self.api(self.admin) as api:
            response = api.post("/v1/screenings", json=pair_body(marker, **extra))
            assert response.status_code == 202, response.text
            return self.item_of(api, response.json()["id"])

    def item_of(self, api: httpx2.Client, screening_id: str) -> int:
        listing = api.get("/v1/queue", params={"limit": 500})
        assert listing.status_code == 200, listing.text
        ids = [i["id"] for i in listing.json()["items"] if i["screening_id"] == screening_id]
        assert len(ids) == 1, listing.json()
        return int(ids[0])

    def item(self, item_id: int) -> dict[str, Any]:
        with self.api(self.admin) as api:
            response = api.get(f"/v1/queue/{item_id}")
            assert response.status_code == 200, response.text
            body: dict[str, Any] = response.json()
            return body


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
