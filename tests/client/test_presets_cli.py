"""`vcp presets run SLUG [--scale-down]` on the generated client, answered by the control
plane's own Django app in the test's process (tests/client/test_job_notes_cli.py's harness):
with the local emulator as the target, the Llama-3-8B preset is refused naming the memory
figures and creates nothing; its scaled-down variant is submitted as the same layout."""

from __future__ import annotations

import json
from typing import Any

from controlplane.runs.models import Job
from tests.client.test_job_notes_cli import Vcp, vcp  # noqa: F401  (the fixture)

SLUG = "llama3-8b-tp2-fsdp4-a100"


def test_a_preset_runs_scaled_down_and_is_refused_at_full_size_locally(
        vcp: Vcp, settings: Any, backend: Any,  # noqa: F811
        django_capture_on_commit_callbacks: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:9"
    listed = json.loads(vcp("presets").output)
    assert SLUG in {p["slug"] for p in listed}
    full = vcp("presets", "run", SLUG)
    assert full.exit_code == 1, full.output
    assert "the machine has" in full.output and "--scale-down" in full.output
    assert Job.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=False):
        scaled = vcp("presets", "run", SLUG, "--scale-down")
    assert scaled.exit_code == 0, scaled.output
    job = Job.objects.get()
    assert job.request["name"] == "llama3-8b-tp2-fsdp4-scaled"
    assert "llama-3-8b-scaled" in job.request["args"]
    assert job.request["parallelism"] == {"tensor": 2}
    unknown = vcp("presets", "run", "no-such-preset")
    assert unknown.exit_code != 0 and SLUG in unknown.output
