"""Packaging a model before it is uploaded, by a short CustomJob: a triton model's Triton model
repository, a tensorrt model's TensorRT engine, an aot model's AOTInductor package.

The control plane never imports torch (DESIGN.md), so it cannot build any of them; a
CustomJob can, in the image that holds the right tools:
- triton: the Triton tools image (``python -m trainers.serving.triton_package WEIGHTS
  WEIGHTS/triton --check``, Dockerfile.triton-tools);
- tensorrt: the TensorRT tools image, on the GPU the engine will serve on, with ``--engine
  tensorrt`` (tensorrt_engine.py); its machine is checked against the catalogue before it is
  sent;
- aot: the serving image itself (``python -m trainers.serving.aot_package WEIGHTS``), whose
  torch is the replicas' own, as a package loads only in the torch that built it. It builds
  the CPU package; a replica on a GPU builds its own at its first start (trainers/serving/
  aot.py).
It goes through the training backend like any job: the emulator runs it locally, Vertex in
production. The entry stays PACKAGING until the job ends; it then moves to UPLOADING (and its
upload is queued) or to FAILED with the job's own error line. The job's display name and
labels come from the entry's primary key, so a retried submit finds what an earlier try
created, and what it builds is built once (the repository's CHECKED marker, a package that
answers as the weights do).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.base import RemoteJob, get_backend
from controlplane.backends.storage import path_for_writer
from controlplane.core.queue import enqueue, send_now
from controlplane.serving import options, tensorrt_engine
from controlplane.serving.models import ModelEntry
from vertexplan.logparse.filters import job_filter

MODULE = "trainers.serving.triton_package"
AOT_MODULE = "trainers.serving.aot_package"
# The export and the checks of a small model take a CPU and a few GiB of memory.
MACHINE_TYPE = "n1-standard-4"
MAX_ERROR_CHARS = 1000
S = ModelEntry.State


def display_name(entry: ModelEntry) -> str:
    return contract_labels.packaging_display_name(entry.pk)


def labels_for(entry: ModelEntry) -> dict[str, str]:
    # No cp-job label: this is not an attempt of the training job (runs/ finds those by it).
    return contract_labels.packaging_labels(entry.pk, entry.team.slug)


def weights_of(entry: ModelEntry) -> str:
    """The folder a repository is built from: the one that holds it (registry.py)."""
    return entry.artifact_uri.rstrip("/").rsplit("/", 1)[0]


def custom_job(entry: ModelEntry) -> dict[str, Any]:
    """The packaging CustomJob (Vertex REST JSON). Paths are what a process writing them
    uses: gs:// on Vertex, the folder standing in for the bucket on the emulator."""
    machine: dict[str, Any] = {"machineType": MACHINE_TYPE}
    module, image = MODULE, options.triton_tools_image()
    if entry.runtime == ModelEntry.Runtime.AOT:
        # The weights are the model's own folder; the package goes beside them.
        module, image = AOT_MODULE, options.serving_image()
        args = [path_for_writer(entry.artifact_uri), "--device", "cpu"]
    else:
        args = [path_for_writer(weights_of(entry)), path_for_writer(entry.artifact_uri),
                "--check"]
    engine = entry.runtime == ModelEntry.Runtime.TENSORRT
    if engine:
        machine, image = tensorrt_engine.machine_spec(), options.tensorrt_tools_image()
        args += tensorrt_engine.ENGINE_ARGS
    job = {
        "displayName": display_name(entry),
        "labels": labels_for(entry),
        "jobSpec": {"workerPoolSpecs": [{
            "machineSpec": machine,
            "replicaCount": "1",
            "containerSpec": {"imageUri": image,
                              "command": ["python", "-m", module], "args": args},
        }],
            # A build fails the same way each time it runs: Vertex's restarts of a replica
            # that exits non-zero (five) would run it six times (a GPU machine's for tensorrt)
            # before the entry could say why.
            "scheduling": {"disableRetries": True}},
    }
    if engine:
        tensorrt_engine.check_job(job)
    return job


def submit(entry_id: int) -> None:
    """Create the entry's packaging job unless it exists already. Safe to run twice."""
    backend = get_backend()
    with transaction.atomic():
        entry = ModelEntry.objects.select_for_update().select_related("team").get(pk=entry_id)
        if entry.state != S.PACKAGING or entry.packaging_job:
            return
        try:
            remote = backend.find_custom_job(display_name(entry), labels_for(entry)) or \
                backend.create_custom_job(custom_job(entry))
        except (errors.InvalidJobSpec, errors.PermissionDenied,
                tensorrt_engine.EngineJobInvalid) as exc:
            entry.transition(S.FAILED, error=f"packaging job refused: {exc}")
            return
        entry.packaging_job = remote.name
        entry.save(update_fields=["packaging_job"])
        _record(entry, remote)


def reconcile(entry: ModelEntry) -> None:
    """Follow a packaging job (called by the serving sweep)."""
    if entry.state != S.PACKAGING:
        return
    if not entry.packaging_job:
        send_now("controlplane.serving.tasks.package_model", str(entry.pk))  # its task was lost
        return
    remote = get_backend().get_custom_job(entry.packaging_job)
    if not remote.is_terminal:
        return
    with transaction.atomic():
        entry = ModelEntry.objects.select_for_update().get(pk=entry.pk)
        if entry.state == S.PACKAGING:
            _record(entry, remote)


def _record(entry: ModelEntry, remote: RemoteJob) -> None:
    if not remote.is_terminal:
        return
    if remote.state == "JOB_STATE_SUCCEEDED":
        if entry.transition(S.UPLOADING):
            enqueue("controlplane.serving.tasks.upload_model", str(entry.pk))
        return
    why = error_line(remote) or remote.error_message or "no error was logged"
    state = remote.state.removeprefix("JOB_STATE_").lower()
    entry.transition(S.FAILED, error=f"packaging job {remote.job_id} {state}: "
                                     f"{why}"[:MAX_ERROR_CHARS])


def error_line(remote: RemoteJob) -> str:
    """The newest ERROR line the packaging job's own code logged, or "" when none can be read.
    The tools print their refusal as a structured line (a JSON message: triton_package,
    aot_package), and it is preferred to the platform's closing lines at the same severity
    ("Job failed. The replica workerpool0-0 exited with a non-zero status of 2 ..."), which
    come after it and say only that it failed; without a structured line, the newest text."""
    try:
        page = get_backend().list_log_entries(
            f"{job_filter(remote.job_id)} AND severity>=ERROR", page_size=20,
            order_by="timestamp desc")
    except errors.BackendError:
        return ""
    texts = []
    for entry in page.entries:
        message = str((entry.json_payload or {}).get("message") or "").strip()
        if message:
            return message
        texts.append(str(entry.text_payload or "").strip())
    return next((text for text in texts if text), "")
