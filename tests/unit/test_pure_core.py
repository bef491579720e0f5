"""The pure core (contract, prompts, evidence, policy, calibration's tally) does no I/O:
it imports no database, HTTP, framework, logging or file-system module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"
PURE = ["contract", "prompts", "evidence", "policy"]
PURE_FILES = ["calibration/tally.py", "calibration/compare.py", "calibration/kind.py"]
FORBIDDEN = {
    "sqlalchemy", "fastapi", "starlette", "httpx", "httpx2", "aiohttp", "logging",
    "socket", "subprocess", "asyncio", "app.repositories", "app.models", "app.db",
    "app.api", "app.llm", "app.settings",
}  # fmt: skip


def modules() -> list[Path]:
    files = [path for package in PURE for path in sorted((APP / package).glob("*.py"))]
    return files + [APP / name for name in PURE_FILES]


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", modules(), ids=lambda path: str(path.relative_to(APP)))
def test_a_pure_module_imports_nothing_that_does_io(path: Path) -> None:
    bad = {
        name
        for name in imported(path)
        for top in FORBIDDEN
        if name == top or name.startswith(top + ".")
    }
    assert not bad, f"{path.relative_to(APP)} imports {sorted(bad)}"
