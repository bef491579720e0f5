"""The browser harness itself: the system Chromium loads a page from a real `faithscreen
serve`, screenshots it, and has fonts for the mathematics Lean statements are written in."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.serve_process import ServeProcess

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

# Drawn on a canvas next to an unassigned code point: with no font holding the glyph both
# come out as the same "tofu" box, and a reviewer could not read the statement.
GLYPH_PIXELS = """
(ch) => {
  const draw = (text) => {
    const canvas = document.createElement("canvas");
    canvas.width = 64; canvas.height = 64;
    const context = canvas.getContext("2d");
    context.font = "40px monospace";
    context.fillText(text, 8, 48);
    return Array.from(context.getImageData(0, 0, 64, 64).data).join(",");
  };
  return [draw(ch), draw("\\u0378")];
}
"""
MATH = ["ℕ", "ℝ", "∀", "∃", "→", "≤", "∑", "⌊"]


def test_chromium_screenshots_a_page_served_by_faithscreen(
    browser_page: Page, review_server: ServeProcess, shots: Path
) -> None:
    browser_page.goto(f"{review_server.base_url}/healthz")
    assert '"status":"ok"' in browser_page.inner_text("body").replace(" ", "")
    shot = shots / "healthz.png"
    browser_page.screenshot(path=str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("glyph", MATH, ids=[f"U+{ord(glyph):04X}" for glyph in MATH])
def test_a_font_draws_the_mathematics_of_lean_statements(browser_page: Page, glyph: str) -> None:
    browser_page.set_content("<!doctype html><meta charset=utf-8><body></body>")
    drawn, missing = browser_page.evaluate(GLYPH_PIXELS, glyph)
    assert drawn != missing, f"{glyph!r} is drawn as a missing glyph: install fonts-noto-core"
