"""The contract is importable everywhere: by the trainers' images and the PyTorch/XLA
environment, which hold none of the control plane's dependencies. It imports the standard
library only and nothing of the project."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (ROOT / "contract").glob("*.py") if p.stem != "__init__")
PROJECT = ("config", "controlplane", "vertexplan", "localvertex", "trainers", "vcp",
           "vertex_control_plane_client")


def test_every_import_is_of_the_standard_library() -> None:
    assert {"events", "labels", "quota_metrics", "prediction"} <= set(MODULES)
    for path in sorted((ROOT / "contract").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path.name}: write the full path"
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in ("__future__", "contract"), (
                    f"{path.relative_to(ROOT)} imports {name}")


def test_a_bare_interpreter_imports_it() -> None:
    """No site-packages at all (-S), nothing from the environment (-I): only the standard
    library and the repository root are on the path."""
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import importlib\n"
        f"for m in {MODULES!r}: importlib.import_module('contract.' + m)\n"
        f"print(sorted({{n.split('.')[0] for n in sys.modules}} & set({PROJECT!r})))"
    )
    result = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(ROOT)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
