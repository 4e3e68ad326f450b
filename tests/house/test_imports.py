"""The house holds: no import circle between files, and no project import tucked inside a
function unless a comment says why (DESIGN.md, "The house"). The layers and SDK boundaries
themselves are import-linter's contracts in pyproject.toml, run by `make test`."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "controlplane", "vertexplan", "localvertex", "trainers")
OURS = ("config", "controlplane", "vertexplan")


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(
                        graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    made = grimp.ImportGraph()
    for module in ("a", "a.one", "a.two", "a.three"):
        made.add_module(module)
    made.add_import(importer="a.one", imported="a.two")
    made.add_import(importer="a.two", imported="a.one")
    made.add_import(importer="a.three", imported="a.one")
    assert _cycles(made) == [["a.one", "a.two"]]


def _tucked_imports(path: Path) -> list[str]:
    """Project imports inside a function with no comment on the line or the line above.
    AppConfig.ready() is where Django wants them: exempt."""
    source = path.read_text()
    lines = source.splitlines()
    found = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) or func.name == "ready":
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [alias.name for alias in node.names]
            if not any(name.split(".")[0] in OURS for name in names) or node.level:
                continue
            here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
            if "#" in here or above.startswith("#"):
                continue
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_project_import_hides_in_a_function_without_a_reason() -> None:
    tucked = [hit for package in OURS for path in sorted((ROOT / package).rglob("*.py"))
              if "migrations" not in path.parts for hit in _tucked_imports(path)]
    assert tucked == []
