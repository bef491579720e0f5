"""No package of app/ imports one that imports it back, however far round: the data flows one
way (HTTP or CLI -> intake -> pipeline -> storage), and a cycle is a sign that code sits on
the wrong side of a line (an HTTP adapter outside app/api, a domain type above the
repositories that build it).

A node is a package (app/<name>/) or a top-level module (app/<name>.py). Every import
counts: at module level, inside a function (a lazy import only hides the dependency), or
under TYPE_CHECKING (the types still couple the two).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"

# (importing node, imported node) -> the files that make that edge.
Edges = dict[tuple[str, str], set[str]]


def node_of(module: str, app: Path) -> str | None:
    """The package or top-level module of app/ that `module` (dotted) is in, if any."""
    parts = module.split(".")
    if parts[0] != app.name or len(parts) < 2:
        return None
    name = parts[1]
    return name if (app / name).is_dir() or (app / f"{name}.py").is_file() else None


def imported_modules(path: Path, dotted: list[str]) -> set[str]:
    """Every module `path` imports, and for `from m import x` also `m.x` (x may be a
    submodule); relative imports resolved against `dotted`, the file's own module path."""
    names: set[str] = set()
    package = dotted if path.name == "__init__.py" else dotted[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def package_edges(app: Path) -> Edges:
    edges: Edges = defaultdict(set)
    for path in sorted(app.rglob("*.py")):
        dotted = [app.name, *path.relative_to(app).with_suffix("").parts]
        if dotted[-1] == "__init__":
            dotted = dotted[:-1]
        source = node_of(".".join(dotted), app)
        if source is None:
            continue
        for module in imported_modules(path, dotted):
            target = node_of(module, app)
            if target is not None and target != source:
                edges[source, target].add(str(path.relative_to(app.parent)))
    return edges


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        graph[source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            component.append(node)
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def described(edges: Edges, component: list[str]) -> list[str]:
    return [
        f"{source} -> {target}: {', '.join(sorted(files))}"
        for (source, target), files in sorted(edges.items())
        if source in component and target in component
    ]


def test_no_package_of_app_imports_one_that_imports_it_back() -> None:
    edges = package_edges(APP)
    assert edges, "no imports between packages found: the walk is broken"
    found = [line for component in cycles(edges) for line in described(edges, component)]
    assert not found, "import cycles between packages of app/:\n" + "\n".join(found)


def test_a_cycle_through_a_lazy_import_is_found(tmp_path: Path) -> None:
    app = tmp_path / "app"
    for package, text in {
        "low": "from app.high.service import run\n",
        "mid": "import app.low.rows\n",
        "high": "def run() -> None:\n    from app.mid import thing\n",
    }.items():
        (app / package).mkdir(parents=True)
        (app / package / "__init__.py").write_text("")
        (app / package / "service.py").write_text(text)
    (app / "top.py").write_text("from app import low\n")
    edges = package_edges(app)
    assert cycles(edges) == [["high", "low", "mid"]]
    assert described(edges, ["high", "low", "mid"]) == [
        "high -> mid: app/high/service.py",
        "low -> high: app/low/service.py",
        "mid -> low: app/mid/service.py",
    ]
    # `from app import low` names the package low itself.
    assert ("top", "low") in edges
