"""faithscreen_client, a distribution of its own, imports only the standard library, its
two dependencies (httpx2, pydantic and pydantic's core) and itself: never the server's
`app`. (tests/e2e/test_client_distribution.py installs it alone and runs it; this says
which line is at fault, at once.)"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python" / "faithscreen_client"
ALLOWED = {"faithscreen_client", "httpx2", "pydantic", "pydantic_core"}


def top_level_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_client_imports_only_its_dependencies() -> None:
    modules = sorted(CLIENT.glob("*.py"))
    assert len(modules) >= 8, modules  # the package is where this test looks
    foreign = {
        f"{path.name}: {name}"
        for path in modules
        for name in top_level_imports(path)
        if name not in ALLOWED and name not in sys.stdlib_module_names
    }
    assert foreign == set()
