"""A pythonPackageSpec job: the emulator runs the module from the package the URI names, with
the spec's arguments and environment, as Vertex's prebuilt executor images do."""

from __future__ import annotations

import textwrap
from pathlib import Path

from google.cloud import aiplatform_v1

from tests.localvertex.helpers import (
    PARENT,
    EmulatorProcess,
    entries,
    job_id,
    json_entries,
    watch_states,
)
from tests.sdists import write_sdist

State = aiplatform_v1.JobState

TASK = textwrap.dedent(
    """
    import json, os, sys
    print(json.dumps({"severity": "INFO", "message": "task", "argv": sys.argv[1:],
                      "greeting": os.environ.get("GREETING"), "module": __name__,
                      "file": __file__}))
    """
)


def _sdist(path: Path) -> None:
    """trainer-0.1.tar.gz as `python setup.py sdist` lays it out: trainer-0.1/trainer/task.py."""
    files = {
        "trainer-0.1/setup.py": "from setuptools import setup\nsetup(name='trainer')\n",
        "trainer-0.1/trainer/__init__.py": "",
        "trainer-0.1/trainer/task.py": TASK,
    }
    write_sdist(path, files)


def test_the_module_runs_from_the_package_with_its_args_and_env(
    emulator: EmulatorProcess,
) -> None:
    _sdist(emulator.data_dir / "gcs" / "pkgs" / "trainer-0.1.tar.gz")
    job = aiplatform_v1.CustomJob(
        display_name="python-package",
        job_spec={
            "worker_pool_specs": [
                {
                    "machine_spec": {"machine_type": "n1-standard-4"},
                    "replica_count": 1,
                    "python_package_spec": {
                        "executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/"
                        "pytorch-gpu.2-4.py310:latest",
                        "package_uris": ["gs://pkgs/trainer-0.1.tar.gz"],
                        "python_module": "trainer.task",
                        "args": ["--epochs", " 2 "],
                        "env": [{"name": "GREETING", "value": "hello\n"}],
                    },
                }
            ]
        },
    )
    created = emulator.jobs.create_custom_job(parent=PARENT, custom_job=job)
    _, finished = watch_states(emulator.jobs, created.name)
    assert finished.state == State.JOB_STATE_SUCCEEDED, emulator.output()[-3000:]
    reports = [e for e in json_entries(entries(emulator.logs,
                                               f'resource.labels.job_id="{job_id(finished)}"'))
               if e.get("message") == "task"]
    assert len(reports) == 1
    report = reports[0]
    assert report["argv"] == ["--epochs", " 2 "]
    assert report["greeting"] == "hello\n"
    assert report["module"] == "__main__"
    assert report["file"].endswith("trainer-0.1/trainer/task.py")
