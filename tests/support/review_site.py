"""The review site the browser tests drive (the fixtures that start it are in
tests/browser/conftest.py): keys made by the real `faithscreen keys create`, and a pair a
reviewer must read exactly."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from tests.support.scripted_openai import contract_reply
from tests.support.serve_process import FAITHSCREEN, ServeProcess

MakeKey = Callable[[str, str], str]


def cli_env(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    return env | {"FAITHSCREEN_DATABASE_URL": database_url}


def run_cli(database_url: str, *args: str) -> str:
    """`faithscreen ARGS` on this database; its output (it must succeed)."""
    done = subprocess.run(
        [FAITHSCREEN, *args], env=cli_env(database_url), capture_output=True, text=True, timeout=180
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
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, out + err
    return out.strip().splitlines()[-1].strip()


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
