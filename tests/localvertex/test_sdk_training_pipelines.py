"""The SDK's training pipelines against the emulator, driven only through
`google.cloud.aiplatform` (tests/localvertex/sdk.py): CustomContainerTrainingJob,
CustomTrainingJob (a local script the SDK packages and stages) and
CustomPythonPackageTrainingJob each train, write AIP_MODEL_DIR and come back with their Model,
as on Vertex; a pipeline whose job fails and one cancelled end as on Vertex too.

The SDK polls a pipeline every 5 s, so the pipelines of a test run side by side (run(sync=False))
and the test waits for them together.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform, storage
from google.cloud.aiplatform_v1 import JobState, PipelineState

from localvertex.replicas.storage import local_path
from tests.localvertex.helpers import EmulatorProcess
from tests.localvertex.sdk import STAGING_BUCKET, sdk_channel
from tests.sdists import write_sdist

IMAGE = "us-docker.pkg.dev/test/trainer:latest"
SERVING_IMAGE = "us-docker.pkg.dev/test/server:latest"
SERVING_COMMAND = ["python", "-m", "http.server"]  # never started here: the model is not deployed

# What each pipeline's job runs: writes its arguments into the model it leaves in AIP_MODEL_DIR.
TRAIN = textwrap.dedent(
    """
    import json, os, sys
    model_dir = os.environ["AIP_MODEL_DIR"]
    os.makedirs(model_dir, exist_ok=True)
    with open(os.path.join(model_dir, "model.json"), "w") as f:
        json.dump({"argv": sys.argv[1:], "module": __name__}, f)
    print(json.dumps({"message": "trained", "model_dir": model_dir}))
    """
)


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess):
    with sdk_channel(monkeypatch, emulator):
        yield


def _package(path: Path) -> None:
    """trainer-0.1.tar.gz laid out as `python setup.py sdist` makes it."""
    files = {
        "trainer-0.1/setup.py": "from setuptools import setup\nsetup(name='trainer')\n",
        "trainer-0.1/trainer/__init__.py": "",
        "trainer-0.1/trainer/task.py": TRAIN,
    }
    write_sdist(path, files)


def _trained(emulator: EmulatorProcess, model: aiplatform.Model) -> str:
    """The model file the job left where the Model's artifact_uri points."""
    return (Path(local_path(emulator.data_dir, model.uri)) / "model.json").read_text()


def test_the_three_custom_training_pipelines_train_and_upload_their_model(
    sdk: None, emulator: EmulatorProcess, tmp_path: Path
) -> None:
    script = tmp_path / "task.py"
    script.write_text(TRAIN)
    # A package the user built and staged (gs:// is a folder of the emulator for now).
    package_uri = f"{STAGING_BUCKET}/packages/trainer-0.1.tar.gz"
    _package(Path(local_path(emulator.data_dir, package_uri)))
    serving = {"model_serving_container_image_uri": SERVING_IMAGE,
               "model_serving_container_command": SERVING_COMMAND}
    jobs = {
        "container": aiplatform.CustomContainerTrainingJob(
            display_name="sdk-container", container_uri=IMAGE,
            command=["python", "-c", TRAIN], labels={"team": "a"}, **serving),
        "script": aiplatform.CustomTrainingJob(
            display_name="sdk-script", script_path=str(script), container_uri=IMAGE,
            **serving),
        "package": aiplatform.CustomPythonPackageTrainingJob(
            display_name="sdk-package", python_package_gcs_uri=package_uri,
            python_module_name="trainer.task", container_uri=IMAGE, **serving),
    }
    models = {
        kind: job.run(model_display_name=f"model-{kind}", args=["--epochs", "2"],
                      replica_count=1, machine_type="n1-standard-4", sync=False)
        for kind, job in jobs.items()
    }
    for model in models.values():
        model.wait()

    # The script was packaged and staged through Google's storage client.
    staged = [b.name for b in storage.Client().list_blobs(STAGING_BUCKET[len("gs://"):])]
    assert any(name.endswith("-aiplatform_custom_trainer_script-0.1.tar.gz")
               for name in staged), staged
    for kind, job in jobs.items():
        assert job.state == PipelineState.PIPELINE_STATE_SUCCEEDED, kind
        model = models[kind]
        assert model.display_name == f"model-{kind}"
        assert model.gca_resource.training_pipeline == job.resource_name
        assert model.version_id == "1"
        assert model.uri.startswith(f"{STAGING_BUCKET}/aiplatform-custom-training-")
        assert model.uri.rstrip("/").endswith("/model")
        assert '"--epochs", "2"' in _trained(emulator, model), kind
        # The backing CustomJob is the emulator's own, named as Vertex names it.
        backing = job.gca_resource.training_task_metadata["backingCustomJob"]
        assert aiplatform.CustomJob.get(backing).state == JobState.JOB_STATE_SUCCEEDED
    assert '"module": "__main__"' in _trained(emulator, models["package"])
    # Each class lists its own kind; Vertex's filter with PipelineState's names.
    listed = aiplatform.CustomContainerTrainingJob.list(
        filter='state="PIPELINE_STATE_SUCCEEDED" AND labels.team="a"')
    assert [j.resource_name for j in listed] == [jobs["container"].resource_name]


def test_a_failing_job_fails_its_pipeline_and_cancel_ends_one_cancelled(
    sdk: None, emulator: EmulatorProcess
) -> None:
    failing = aiplatform.CustomContainerTrainingJob(
        display_name="sdk-fails", container_uri=IMAGE,
        command=["python", "-c", "import sys; print('bad input', file=sys.stderr); sys.exit(3)"])
    slow = aiplatform.CustomContainerTrainingJob(
        display_name="sdk-cancelled", container_uri=IMAGE,
        command=["python", "-c", "import time; time.sleep(600)"])
    no_model = aiplatform.CustomContainerTrainingJob(
        display_name="sdk-no-model", container_uri=IMAGE, command=["python", "-c", "pass"],
        model_serving_container_image_uri=SERVING_IMAGE,
        model_serving_container_command=SERVING_COMMAND)
    failing.run(replica_count=1, machine_type="n1-standard-4", sync=False)
    slow.run(replica_count=1, machine_type="n1-standard-4", sync=False)
    no_model.run(model_display_name="never", replica_count=1, machine_type="n1-standard-4",
                 sync=False)
    slow.wait_for_resource_creation()
    slow.cancel()

    with pytest.raises(RuntimeError, match="Training failed with"):
        failing.wait()
    assert failing.state == PipelineState.PIPELINE_STATE_FAILED
    assert failing.gca_resource.error.message.startswith("Job failed")
    with pytest.raises(RuntimeError, match="Training failed with"):
        slow.wait()
    assert slow.state == PipelineState.PIPELINE_STATE_CANCELLED
    assert slow.gca_resource.error.code == 1
    backing = slow.gca_resource.training_task_metadata["backingCustomJob"]
    assert aiplatform.CustomJob.get(backing).state == JobState.JOB_STATE_CANCELLED
    # The pipeline asked for a model and the job wrote none.
    with pytest.raises(RuntimeError, match="wrote no model to AIP_MODEL_DIR"):
        no_model.wait()
    assert no_model.state == PipelineState.PIPELINE_STATE_FAILED
    # A finished pipeline can be deleted (through a fresh handle: the SDK's run future keeps
    # raising the failure on the object that ran it).
    aiplatform.CustomContainerTrainingJob.get(failing.resource_name).delete()
    assert not [j for j in aiplatform.CustomContainerTrainingJob.list()
                if j.resource_name == failing.resource_name]


def test_a_pipeline_the_emulator_cannot_run_is_refused_naming_the_field(
    sdk: None,
) -> None:
    # A serving container without a command: the emulator cannot run an image's entrypoint.
    job = aiplatform.CustomContainerTrainingJob(
        display_name="sdk-refused", container_uri=IMAGE, command=["python", "-c", "pass"],
        model_serving_container_image_uri=SERVING_IMAGE)
    with pytest.raises(exceptions.InvalidArgument,
                       match=r"training_pipeline\.model_to_upload\.container_spec\.command"):
        job.run(model_display_name="m", replica_count=1, machine_type="n1-standard-4")
    # A worker pool without a machine type, refused as CreateCustomJob refuses it.
    job = aiplatform.CustomContainerTrainingJob(
        display_name="sdk-refused", container_uri=IMAGE, command=["python", "-c", "pass"])
    with pytest.raises(exceptions.InvalidArgument,
                       match=r"training_pipeline\.training_task_inputs\.worker_pool_specs"):
        job.run(replica_count=1, machine_type="")
