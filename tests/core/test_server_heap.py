"""The web server's application modules leave their startup heap out of the cyclic collector
(config/heap.py), with every view already imported, in a process of their own as a gunicorn
worker loads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Left out of `make test-fast` (the inner loop): a server process measured.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, sys
import {module} as served
print(json.dumps({{
    "frozen": gc.get_freeze_count(),
    "views_loaded": "controlplane.runs.views" in sys.modules and "config.urls" in sys.modules,
    "tracked_after": len(gc.get_objects()),
    "callable": callable(served.application),
}}))
"""


@pytest.mark.parametrize("module", ["config.wsgi", "config.asgi"])
def test_application_module_freezes_what_startup_made(module: str) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["callable"]
    assert found["views_loaded"]
    # Django, DRF and the views are tens of thousands of objects; what is still tracked is
    # only what was made after the freeze.
    assert found["frozen"] > 50_000
    assert found["tracked_after"] < found["frozen"] / 10
