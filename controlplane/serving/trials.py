"""Runtime trials: before a model is deployed, each candidate runtime (eager, compiled, aot,
triton; vllm where a GPU is) is served and measured on the machine type it is to be deployed
on, under the endpoint's expected traffic, and the cheapest runtime that meets the p99 target
is preselected (vertexplan/runtime_choice.py decides; this module runs the trial).

The trial is a short CustomJob in the serving image (trainers/serving/runtime_trial.py), sent
through the training backend as the packaging job is (packaging.py): the emulator runs it
locally as a real process, Vertex in production, on the trial's own machine type with its GPUs.
It reads the weights and writes its figures to one JSON file in its own output folder, under
the team's output prefix (``<prefix>/runtime-trials/trial-<id>/figures.json``: the job's
baseOutputDirectory, which the emulator gives the team's user as Vertex gives the job's
service account), read back once the job has succeeded; the hourly price of that machine
(hardware.hourly, integer micro-dollars) turns each runtime's throughput into a cost per
million tokens. The job's display name and labels come from the trial's primary key, so a
retried submit finds the job an earlier try created.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.db import transaction

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.base import get_backend
from controlplane.backends.storage import path_for_writer, read_small
from controlplane.core.queue import enqueue, send_now
from controlplane.serving import hardware, lifecycle, options, packaging
from controlplane.serving.models import ModelEntry
from controlplane.serving.trial_models import RuntimeTrial
from controlplane.teams import policy as team_policy
from vertexplan import runtime_choice

logger = logging.getLogger(__name__)

MODULE = "trainers.serving.runtime_trial"
TASK = "controlplane.serving.tasks.run_runtime_trial"
RESULTS_FOLDER = "runtime-trials"
RESULTS_FILE = "figures.json"
PURPOSE = "runtime-trial"
TRIAL_LABEL = "cp-trial"
# The product's own runtimes and Triton serve the product's byte-level models; vllm serves
# Hugging Face models on GPUs, so on a product model's trial its row only says why it has none.
PRODUCT_CANDIDATES = ("eager", "compiled", "aot", "triton", "vllm")
MAX_ERROR_CHARS = 1000
T = RuntimeTrial.State


class TrialError(ValueError):
    """A trial that cannot be run as asked; ``field`` names the field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def display_name(trial: RuntimeTrial) -> str:
    return f"{contract_labels.vertex_model_id(trial.model_entry_id)}-trial-{trial.pk}"


def labels_for(trial: RuntimeTrial) -> dict[str, str]:
    # No cp-job label: not an attempt of the training job (runs/ finds attempts by it).
    return {contract_labels.MODEL: str(trial.model_entry_id), contract_labels.PURPOSE: PURPOSE,
            TRIAL_LABEL: str(trial.pk),
            contract_labels.TEAM: contract_labels.team_value(trial.model_entry.team.slug)}


def weights_of(entry: ModelEntry) -> str:
    """The folder holding the model's weights: a triton or tensorrt entry's artifact is its
    repository, built beside them (packaging.py)."""
    if entry.runtime in (ModelEntry.Runtime.TRITON, ModelEntry.Runtime.TENSORRT):
        return packaging.weights_of(entry)
    return entry.artifact_uri.rstrip("/")


def results_folder(trial: RuntimeTrial) -> str:
    """The trial job's output folder, under its team's output prefix (as a job's is)."""
    prefix = team_policy.effective(trial.model_entry.team).output_prefix.rstrip("/")
    return f"{prefix}/{RESULTS_FOLDER}/trial-{trial.pk}"


def start(entry: ModelEntry, user: Any, *, traffic: runtime_choice.Traffic,
          machine_type: str, accelerator_type: str = "", accelerator_count: int = 0
          ) -> RuntimeTrial:
    """Record a trial of ``entry`` and queue its job; TrialError (naming the field) when it
    cannot run as asked. Nothing is created then."""
    if entry.format != ModelEntry.Format.PRODUCT:
        raise TrialError("model", f"runtime trials measure the product's byte-level models "
                                  f"(format product); model {entry.display_name} is format "
                                  f"{entry.format}")
    if entry.state == ModelEntry.State.FAILED:
        raise TrialError("model", f"model {entry.display_name} is FAILED: register it again")
    try:
        lifecycle.check_resources(machine_type, accelerator_type, accelerator_count, 1, 1, "", 0)
    except lifecycle.ServingError as exc:
        field = exc.field or ("machine_type" if "machine type" in str(exc) else
                              "accelerator_count" if "counts of" in str(exc) else
                              "accelerator_type")
        raise TrialError(field, str(exc)) from exc
    if refusal := hardware.machine_refusal(machine_type):
        raise TrialError("machine_type", refusal)
    price = hardware.hourly(machine_type, accelerator_type, accelerator_count)
    with transaction.atomic():
        trial = RuntimeTrial.objects.create(
            model_entry=entry, created_by=user, machine_type=machine_type,
            accelerator_type=accelerator_type, accelerator_count=accelerator_count,
            prompt_tokens=traffic.prompt_tokens, output_tokens=traffic.output_tokens,
            concurrency=traffic.concurrency, requests=traffic.requests,
            p99_target_ms=traffic.p99_target_ms, runtimes=list(PRODUCT_CANDIDATES),
            hourly_micros=price.micros)
        enqueue(TASK, str(trial.pk))
    return trial


def custom_job(trial: RuntimeTrial) -> dict[str, Any]:
    """The trial's CustomJob (Vertex REST JSON), on the machine the model is to serve on."""
    machine: dict[str, Any] = {"machineType": trial.machine_type}
    if trial.accelerator_type:
        machine.update(acceleratorType=trial.accelerator_type,
                       acceleratorCount=trial.accelerator_count)
    args = [path_for_writer(weights_of(trial.model_entry)),
            path_for_writer(f"{results_folder(trial)}/{RESULTS_FILE}"),
            "--runtimes", ",".join(trial.runtimes),
            "--prompt-tokens", str(trial.prompt_tokens),
            "--output-tokens", str(trial.output_tokens),
            "--concurrency", str(trial.concurrency), "--requests", str(trial.requests)]
    return {
        "displayName": display_name(trial),
        "labels": labels_for(trial),
        "jobSpec": {"workerPoolSpecs": [{
            "machineSpec": machine,
            "replicaCount": "1",
            "containerSpec": {"imageUri": options.serving_image(),
                              "command": ["python", "-m", MODULE], "args": args},
        }],
            "baseOutputDirectory": {"outputUriPrefix": results_folder(trial)},
            # A measurement run again would only repeat itself, at the machine's price.
            "scheduling": {"disableRetries": True}},
    }


def submit(trial_id: int) -> None:
    """Create the trial's job unless it exists already. Safe to run twice."""
    backend = get_backend()
    with transaction.atomic():
        trial = RuntimeTrial.objects.select_for_update(of=("self",)).select_related(
            "model_entry", "model_entry__team").get(pk=trial_id)
        if trial.state != T.PENDING or trial.job_name:
            return
        try:
            remote = backend.find_custom_job(display_name(trial), labels_for(trial)) or \
                backend.create_custom_job(custom_job(trial))
        except (errors.InvalidJobSpec, errors.PermissionDenied) as exc:
            trial.transition(T.FAILED, error_message=f"trial job refused: {exc}")
            return
        trial.transition(T.RUNNING, job_name=remote.name)


def reconcile(trial: RuntimeTrial) -> None:
    """Follow a trial's job (the serving sweep calls it); read its figures once it succeeded."""
    if trial.state == T.PENDING:
        if not trial.job_name:
            send_now(TASK, str(trial.pk))  # its task was lost
        return
    if trial.state != T.RUNNING:
        return
    remote = get_backend().get_custom_job(trial.job_name)
    if not remote.is_terminal:
        return
    trial = RuntimeTrial.objects.select_related("model_entry", "model_entry__team").get(
        pk=trial.pk)
    if remote.state != "JOB_STATE_SUCCEEDED":
        why = packaging.error_line(remote) or remote.error_message or "no error was logged"
        state = remote.state.removeprefix("JOB_STATE_").lower()
        trial.transition(T.FAILED, error_message=f"trial job {remote.job_id} {state}: "
                                                 f"{why}"[:MAX_ERROR_CHARS])
        return
    raw = read_small(results_folder(trial), RESULTS_FILE)
    rows = _rows(raw, trial.runtimes)
    if rows is None:
        trial.transition(T.FAILED, error_message=f"trial job {remote.job_id} succeeded but "
                                                 f"left no figures in {results_folder(trial)}/"
                                                 f"{RESULTS_FILE}")
        return
    choice = runtime_choice.choose(rows, trial.p99_target_ms, trial.hourly_micros)
    results = [{**row.as_row(), "cost_per_million_micros": choice.costs.get(row.runtime),
                "meets_target": None if row.p99_ms is None
                else row.p99_ms <= trial.p99_target_ms} for row in rows]
    trial.transition(T.SUCCEEDED, results=results, chosen_runtime=choice.runtime or "",
                     choice_reason=choice.reason[:300])


def _rows(raw: bytes | None, runtimes: list[str]) -> list[runtime_choice.Measured] | None:
    """The figures file's rows, one per runtime the trial asked for, in its order (a row of
    another runtime, or a second of the same, is dropped); None when it cannot be read."""
    if raw is None:
        return None
    try:
        rows = json.loads(raw)["rows"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return None
    found: dict[str, runtime_choice.Measured] = {}
    for row in rows:
        measured = runtime_choice.Measured.from_dict(row)
        if measured.runtime in runtimes:
            found.setdefault(measured.runtime, measured)
    return [found[name] for name in runtimes if name in found]


def reconcile_all() -> None:
    for trial in RuntimeTrial.objects.filter(state__in=(T.PENDING, T.RUNNING)):
        try:
            reconcile(trial)
        except errors.TransientBackendError as exc:
            logger.warning("serving sweep: runtime trial %s: %s", trial.pk, exc)
