"""The README is the first ten minutes: short, its two set-up commands first, written for
users of the product. The reference lives in docs/ (built by `mkdocs build --strict` in
.ci/run, not here)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SET_UP_COMMANDS = [
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/faithscreen serve",
    'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && .venv/bin/pytest',
]


def test_the_readme_reads_in_ten_minutes() -> None:
    assert len(README.splitlines()) < 300


def test_the_two_set_up_commands_come_first() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.DOTALL)
    assert first_block is not None
    assert first_block.group(1).splitlines() == SET_UP_COMMANDS
    before = README[: first_block.start()]
    assert [line for line in before.splitlines() if line.strip()] == ["# FaithScreen"]


def test_no_issue_numbers() -> None:
    assert re.findall(r"\bissues? #?\d+", README, re.IGNORECASE) == []


def test_no_paths_outside_the_repository() -> None:
    assert "../" not in README


def test_every_relative_link_names_a_file_in_the_repository() -> None:
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    relative = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert relative, "the README links into docs/"
    assert [t for t in relative if not (ROOT / t).exists()] == []
