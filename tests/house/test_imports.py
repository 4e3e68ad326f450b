"""The house holds: no import circle between files (imports under ``if TYPE_CHECKING:``
counted, as they are still arrows a reader must follow), no module that reaches its siblings
through its own package's face (``from pkg import x`` inside ``pkg``: the package's
``__init__`` runs and may import the importer back), and no project import tucked inside a
function unless a comment says why (DESIGN.md, "The house"). The layers and SDK boundaries
themselves are import-linter's contracts in pyproject.toml, run by `make test`."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "controlplane", "vertexplan", "contract", "localvertex", "trainers")
# Top-level folders of modules, held to a size a reader can take in at a glance (DESIGN.md:
# a room per service or framework, the rest inside them).
ROOMED = {"localvertex": 10, "trainers": 10}
OURS = ("config", "controlplane", "vertexplan", "contract")


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


def _file_graph() -> grimp.ImportGraph:
    """Every project module (a package's ``__init__`` as the package) with an arrow for each
    import, as the reader sees it: imports under ``if TYPE_CHECKING:`` and inside functions
    count, and ``from P import x`` is an arrow to P's ``__init__`` as well as to ``P.x``
    when that is a module, since the interpreter runs the face to get there."""
    modules = {".".join(_module_name(path)): path for package in PACKAGES
               for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts}
    graph = grimp.ImportGraph()
    for name in modules:
        graph.add_module(name)

    def ours(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for name, path in modules.items():
        for _, target, names in _import_targets(path):
            for dotted in [target, *(f"{target}.{n}" for n in names)]:
                found = ours(dotted)
                if found and found != name:
                    graph.add_import(importer=name, imported=found)
    return graph


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return _file_graph()


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph,
                                                  package: str) -> None:
    assert [c for c in _cycles(graph) if c[0].split(".")[0] == package] == []


def _module_name(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _import_targets(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) for each ``from module import names`` (relative ones resolved)
    and each ``import module`` (names empty)."""
    parts = _module_name(path)
    package = parts if path.name == "__init__.py" else parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = ".".join(base) + (f".{node.module}" if node.module else "")
            else:
                target = node.module or ""
            found.append((node.lineno, target, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, []) for alias in node.names)
    return found


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _face_imports(path: Path) -> list[str]:
    """Imports through the face of a package the module belongs to (its own or an
    enclosing one): a name the ``__init__`` defines or re-exports, or a sibling module reached
    through an ``__init__`` that imports the importer back. Either way the importer depends on
    its own package's ``__init__``, which depends on it."""
    me = ".".join(_module_name(path))
    if path.name == "__init__.py":
        return []
    ancestors = {".".join(_module_name(path)[:i]) for i in range(1, len(_module_name(path)))}
    found = []
    for line, target, names in _import_targets(path):
        if target not in ancestors:
            continue
        face = ROOT.joinpath(*target.split("."), "__init__.py")
        face_imports = {t for _, t, ns in _import_targets(face)} | {
            f"{t}.{n}" for _, t, ns in _import_targets(face) for n in ns}
        for name in names:
            sibling = f"{target}.{name}"
            back = any(me == t or me.startswith(t + ".") or t.startswith(me + ".")
                       for t in face_imports)
            if not _is_module(sibling) or back:
                found.append(f"{path.relative_to(ROOT)}:{line} from {target} import {name}")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_imports_its_own_package_face(package: str) -> None:
    found = [hit for path in sorted((ROOT / package).rglob("*.py"))
             if "migrations" not in path.parts for hit in _face_imports(path)]
    assert found == []


@pytest.mark.parametrize("package", sorted(ROOMED))
def test_rooms_keep_few_top_level_modules(package: str) -> None:
    modules = sorted(p.name for p in (ROOT / package).glob("*.py")
                     if p.name not in ("__init__.py", "__main__.py"))
    assert len(modules) <= ROOMED[package], modules


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
