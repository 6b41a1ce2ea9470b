"""The layout shows the architecture: no import cycles among Coach's modules. (A module's
length is no test: modules are split by concept, one concept each, and review judges their
cohesion; a count of lines would only reward squeezing them.)

What counts as an import: every ``import`` and ``from ... import`` that runs when a module is
imported or type-checked: at module level, in class bodies, under ``try`` and under
``if TYPE_CHECKING:`` (a cycle the type checker needs is still a cycle between two concepts).
Imports inside function bodies are left out: they are deliberate lazy imports (the CLI's
quick start, optional dependencies such as Ray), taken when the function runs.

``from a.b import c`` imports module ``a.b.c`` when there is one, else module ``a.b`` (its
``__init__``); ``import a.b.c`` imports ``a.b.c``. The packages' ``__init__`` modules that
Python runs on the way (``a``, ``a.b``) are not counted: they re-export names for users and
are no layer of their own.
"""

from __future__ import annotations

import ast
import itertools
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import coach

KNOWN_CYCLE_EDGES: dict[tuple[str, str], str] = {}
"""Imports that close a cycle and are being removed in work under way, with the reason. The
test fails once such an import is gone, so that its entry goes too."""

ROOT = Path(coach.__file__).parent


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root`` by dotted name (a package by its own name)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _eager_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``tree`` outside function bodies."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        else:
            yield from _eager_imports(node)


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _eager_imports(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at ``root`` and the modules of the package it imports."""
    modules = module_names(root)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def tangles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(components)


def shortest_cycle(graph: dict[str, set[str]], start: str) -> list[str]:
    """A shortest import cycle from ``start`` back to it (breadth first), or ``[]``."""
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while (before := previous[path[-1]]) is not None:
                    path.append(before)
                return [*reversed(path), start]
            if w not in previous:
                previous[w] = v
                queue.append(w)
    return []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """For every tangle, the shortest cycles through each of its modules, without repeats:
    enough to see every import that ties it."""
    found: list[list[str]] = []
    for component in tangles(graph):
        seen: set[frozenset[tuple[str, str]]] = set()
        for module in component:
            cycle = shortest_cycle(graph, module)
            edges = frozenset(itertools.pairwise(cycle))
            if edges not in seen:
                seen.add(edges)
                found.append(cycle)
    return found


# -- Coach's own layout -----------------------------------------------------------------------


def test_no_import_cycles_among_coachs_modules() -> None:
    graph = import_graph(ROOT)
    assert "coach.graph_managers.graph_manager" in graph  # the finder sees the modules
    for importer, imported in KNOWN_CYCLE_EDGES:
        graph[importer].discard(imported)
    found = cycles(graph)
    assert not found, "import cycles among coach's modules:\n" + "\n".join(
        "  " + " -> ".join(cycle) for cycle in found
    )


def test_every_known_cycle_edge_is_still_there() -> None:
    graph = import_graph(ROOT)
    gone = [edge for edge in KNOWN_CYCLE_EDGES if edge[1] not in graph[edge[0]]]
    assert not gone, f"delete these from KNOWN_CYCLE_EDGES, their imports are gone: {gone}"


# -- the cycle finder itself, on a made-up package ----------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_finder_sees_type_checking_relative_and_submodule_imports(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from pkg.b import B\n",
            "b.py": "from .sub import c\nimport os\n",
            "sub/__init__.py": "",
            "sub/c.py": "from .. import a\n",
        },
    )
    graph = import_graph(root)
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.sub.c"},
        "pkg.sub": set(),
        "pkg.sub.c": {"pkg.a"},
    }
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]


def test_the_finder_leaves_imports_in_functions_out_and_names_each_tangle(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "import pkg.b\n\ndef later():\n    import pkg.c\n",
            "b.py": "from pkg import a\n",
            "c.py": "import pkg.a\nclass C:\n    from pkg import d\n",
            "d.py": "from pkg.c import C\n",
        },
    )
    graph = import_graph(root)
    assert graph["pkg.a"] == {"pkg.b"}
    assert tangles(graph) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"], ["pkg.c", "pkg.d", "pkg.c"]]
