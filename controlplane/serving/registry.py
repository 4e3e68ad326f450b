"""Model registry entries from a job's checkpoints, uploaded to Vertex's Model Registry.

Where the weights live comes from the job's own events: a `checkpoint_saved` event names the
step's folder, and a finished run's export is `<output_uri>/model/` (AIP_MODEL_DIR). The URI is
kept in gs:// form even when the trainer printed the local path the emulator gave it, because
that is what Vertex's Model.artifact_uri takes.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.serving_base import Container, get_serving_backend
from controlplane.core.queue import enqueue
from controlplane.runs import checkpoints
from controlplane.runs.models import Job, JobState
from controlplane.serving import hf_folder, images, options, tensorrt_engine, vllm_runtime
from controlplane.serving.models import ModelEntry
from controlplane.teams.models import Team
from vertexplan import serving_vllm
from vertexplan.catalog.prediction_images import prediction_images
from vertexplan.hf_export import ExportRefused

SERVE_COMMAND = ["python", "-m", "trainers.serve"]
# Checkpoints these strategies write hold the whole model in model.pt (trainers/serving/loader).
# Strategies whose checkpoints the serving container reads: single-file ones (ddp) and the
# sharded ones it consolidates as it loads (FSDP's and tensor/pipeline parallel DCP shards,
# DeepSpeed ZeRO partitions: trainers/serving/consolidate.py). A TPU job's checkpoints are
# Orbax or PyTorch/XLA ones: its final export is what serves.
SERVABLE_CHECKPOINT_STRATEGIES = ("ddp", "single", "fsdp", "zero1", "zero2", "zero3")

# The triton runtime: Triton's image in Vertex mode (VERTEX_FACTS.md A6). With no
# --model-repository it serves $AIP_STORAGE_URI, Vertex's copy of the artifact_uri: the
# repository root `python -m trainers.serving.triton_package` writes in the model's folder.
TRITON_MODEL = "gpt"  # triton_repo's default model name: the logits of every position
# The model a triton entry's container serves on the predict route: the generation loop inside
# Triton (trainers/serving/triton_generate_model.py), one request per generation. A tensorrt
# engine's repository holds the logits model alone, which the control plane loops over.
TRITON_GENERATE_MODEL = f"{TRITON_MODEL}_generate"
TRITON_REPOSITORY = "triton"  # the repository root's folder in the model's folder
TRITON_COMMAND = ["tritonserver"]
DEFAULT_MODEL_FLAG = "--vertex-ai-default-model="
TRITON_ARGS = [f"{DEFAULT_MODEL_FLAG}{TRITON_GENERATE_MODEL}"]
TENSORRT_ARGS = [f"{DEFAULT_MODEL_FLAG}{TRITON_MODEL}"]
# Triton answers Vertex on AIP_PREDICT_ROUTE and AIP_HEALTH_ROUTE, which Vertex sets from these;
# a rawPredict body goes to the predict route as it is (KServe v2 inference JSON).
TRITON_PREDICT_ROUTE = f"/v2/models/{TRITON_GENERATE_MODEL}/infer"
TRITON_HEALTH_ROUTE = "/v2/health/ready"
# Runtimes served by Triton's image, packaged first, asked in KServe v2 JSON. tensorrt's
# repository sits in its own folder: the engine is another build of the same weights.
TRITON_RUNTIMES = (ModelEntry.Runtime.TRITON, ModelEntry.Runtime.TENSORRT)
# Runtimes whose model is built by a packaging job (packaging.py) before it is uploaded: a
# Triton repository, a TensorRT engine, an AOTInductor package.
PACKAGED_RUNTIMES = (*TRITON_RUNTIMES, ModelEntry.Runtime.AOT)
REPOSITORY_FOLDERS = {ModelEntry.Runtime.TRITON: TRITON_REPOSITORY,
                      ModelEntry.Runtime.TENSORRT: "tensorrt"}


class RegistryError(ValueError):
    """The entry cannot be made as asked; the message says why (shown to the user) and `field`
    names the request field at fault."""

    def __init__(self, message: str, field: str = "step") -> None:
        super().__init__(message)
        self.field = field


def artifact_for(job: Job, step: int | None) -> str:
    """The gs:// folder of a job's checkpoint at `step`, or of its final export (step None)."""
    if step is None:
        if job.state != JobState.SUCCEEDED:
            raise RegistryError(f"job #{job.pk} is {job.state}: only a job that succeeded has "
                                "exported its final model; pick a checkpoint step instead")
        return f"{job.output_uri}/model"
    strategy = (job.request or {}).get("strategy", "ddp")
    if strategy not in SERVABLE_CHECKPOINT_STRATEGIES:
        raise RegistryError(f"job #{job.pk} trained with {strategy}, whose checkpoints the "
                            "serving container cannot read: register its final export "
                            "instead (no step)")
    # Only a checkpoint that still exists: rotation may have deleted older ones.
    saved = checkpoints.at_step(job, step)
    if saved is None:
        steps = checkpoint_steps(job)
        raise RegistryError(f"job #{job.pk} has no checkpoint at step {step} "
                            f"(checkpoints: {', '.join(map(str, steps)) or 'none'}; those "
                            "rotation deleted are not listed)")
    path = saved.path
    if path.startswith("gs://"):
        # The path a trainer printed: never trusted to stay in the team's own folders.
        return _under_job_output(job, path)
    # A local path (the emulator's stand-in for the bucket): the same folder under the job's
    # output URI, which is where Vertex would have put it.
    return f"{job.output_uri}/checkpoints/{path.rsplit('/', 1)[-1] or f'step-{step:08d}'}"


def checkpoint_steps(job: Job) -> list[int]:
    return sorted(c.step for c in checkpoints.existing(job))


# The runtimes that serve each format: a Hugging Face model is served by the product's server
# (eager or compiled, which reads its tokenizer) or by vLLM; the packaged runtimes build from the
# product's own model.pt.
FORMAT_RUNTIMES = {
    ModelEntry.Format.PRODUCT: tuple(r for r in ModelEntry.Runtime.values
                                     if r != ModelEntry.Runtime.VLLM),
    ModelEntry.Format.HF: (ModelEntry.Runtime.EAGER, ModelEntry.Runtime.COMPILED,
                           ModelEntry.Runtime.VLLM),
}


def register(*, job: Job | None, user: Any, step: int | None, display_name: str = "",
             runtime: str = ModelEntry.Runtime.EAGER, image_uri: str = "",
             format: str = ModelEntry.Format.PRODUCT, artifact_uri: str = "",
             team: Team | None = None, vllm: dict[str, Any] | None = None) -> ModelEntry:
    """Record an entry and queue its upload once the row is committed. `image_uri`: the
    serving image, when not the product's own; it must exist (images.require_existing).
    format hf: a Hugging Face model folder, the job's final export (AIP_MODEL_DIR, where
    --export-hf writes by default) or `artifact_uri`, any folder under the team's prefix;
    `vllm` the vllm runtime's machine and settings (vllm_runtime.plan)."""
    if runtime not in ModelEntry.Runtime.values:
        raise RegistryError(f"unknown runtime {runtime!r}: one of "
                            f"{', '.join(ModelEntry.Runtime.values)}", "runtime")
    if format not in FORMAT_RUNTIMES:
        raise RegistryError(f"unknown format {format!r}: one of "
                            f"{', '.join(FORMAT_RUNTIMES)}", "format")
    if runtime not in FORMAT_RUNTIMES[format]:
        raise RegistryError(f"the {runtime} runtime does not serve a {format} model: for the "
                            f"{format} format one of {', '.join(FORMAT_RUNTIMES[format])}"
                            + (" (vllm serves Hugging Face models: register an HF export, "
                               "format hf)" if runtime == ModelEntry.Runtime.VLLM else ""),
                            "runtime")
    if format == ModelEntry.Format.HF:
        return _register_hf(job=job, user=user, step=step, display_name=display_name,
                            runtime=runtime, image_uri=image_uri, artifact_uri=artifact_uri,
                            team=team, vllm=vllm or {})
    if artifact_uri:
        raise RegistryError("artifact_uri names a Hugging Face model folder: register it with "
                            "format hf (a job's checkpoint or final export of the product's "
                            "own format is named by job and step)", "artifact_uri")
    if job is None:
        raise RegistryError("name the job whose checkpoint or final export to register", "job")
    triton = runtime in TRITON_RUNTIMES
    packaged = runtime in PACKAGED_RUNTIMES
    if triton and not image_uri.strip():
        raise RegistryError(f"the {runtime} runtime serves Triton's image, not the product's: push "
                            f"{triton_image()} to your Artifact Registry and name that copy",
                            "image_uri")
    image = image_uri.strip() or options.serving_image()
    if image_uri.strip():
        try:
            images.require_usable(image, job.team)
        except images.ImageRefused as exc:
            raise RegistryError(str(exc), "image_uri") from exc
    artifact = artifact_for(job, step)
    if triton:
        artifact = f"{_under_job_output(job, artifact)}/{REPOSITORY_FOLDERS[runtime]}"
    name = display_name or f"{job.name}-{'final' if step is None else f'step-{step}'}"
    return _create(
        team=job.team, job=job, created_by=user, display_name=name[:128], step=step,
        artifact_uri=artifact, image_uri=image,
        command=list(TRITON_COMMAND if triton else SERVE_COMMAND), runtime=runtime,
        args=_args(runtime),
        # The engine's GPU: the one its packaging job builds on (tensorrt_engine.py).
        engine_accelerator=(tensorrt_engine.ACCELERATOR_TYPE
                            if runtime == ModelEntry.Runtime.TENSORRT else ""),
        # A triton or tensorrt model's repository, an aot model's package, is built
        # by its packaging job first.
        state=ModelEntry.State.PACKAGING if packaged else ModelEntry.State.UPLOADING,
    )


def _create(**fields: Any) -> ModelEntry:
    packaged = fields["state"] == ModelEntry.State.PACKAGING
    try:
        with transaction.atomic():
            entry = ModelEntry.objects.create(**fields)
            enqueue("controlplane.serving.tasks." + ("package_model" if packaged else
                                                     "upload_model"), str(entry.pk))
    except IntegrityError as exc:
        raise RegistryError(f"{fields['artifact_uri']} is registered already in the "
                            f"{fields['runtime']} runtime; register it in another runtime or "
                            "use that entry", "artifact_uri") from exc
    return entry


def _register_hf(*, job: Job | None, user: Any, step: int | None, display_name: str,
                 runtime: str, image_uri: str, artifact_uri: str, team: Team | None,
                 vllm: dict[str, Any]) -> ModelEntry:
    """A Hugging Face model folder, checked (hf_folder.py) before anything is recorded."""
    if step is not None:
        raise RegistryError("a Hugging Face model is a job's final export or a folder: leave "
                            "step out (checkpoints are in the trainer's own format)", "step")
    if job is None and team is None:
        raise RegistryError("name the team (or the job) the model folder belongs to", "team")
    owner = job.team if job is not None else team
    assert owner is not None
    if team is not None and job is not None and team.pk != job.team_id:
        raise RegistryError(f"job #{job.pk} is not team {team.slug}'s", "team")
    field = "artifact_uri" if artifact_uri.strip() else "job"
    if job is None and not artifact_uri.strip():
        raise RegistryError("name the Hugging Face model folder (gs://...) to register, or the "
                            "job whose final export it is", "artifact_uri")
    try:
        folder = hf_folder.check_place(artifact_uri.strip() or artifact_for(job, None), owner,
                                       job.output_uri if job is not None else "")
        export = hf_folder.inspect(folder)
    except ExportRefused as exc:
        raise RegistryError(str(exc), field) from exc
    is_vllm = runtime == ModelEntry.Runtime.VLLM
    if vllm and not is_vllm:
        raise RegistryError("vllm settings apply to the vllm runtime only", "runtime")
    image = image_uri.strip() or (serving_vllm.IMAGE_URI if is_vllm else options.serving_image())
    if image_uri.strip():
        try:
            images.require_usable(image, owner)
        except images.ImageRefused as exc:
            raise RegistryError(str(exc), "image_uri") from exc
    settings: dict[str, Any] = {}
    args = _args(runtime)
    if is_vllm:
        if not vllm.get("machine_type"):
            raise RegistryError("the vllm runtime is registered for a machine, whose GPUs are "
                                "its tensor parallel size: name machine_type (e.g. "
                                "g2-standard-8)", "machine_type")
        try:
            settings = vllm_runtime.plan(export.as_dict(), **vllm)
        except vllm_runtime.VllmRefused as exc:
            raise RegistryError(str(exc), exc.field) from exc
        args = vllm_runtime.args_for(folder, settings)
    name = display_name or (f"{job.name}-hf" if job is not None else folder.rsplit("/", 1)[-1])
    return _create(
        team=owner, job=job, created_by=user, display_name=name[:128], step=None,
        artifact_uri=folder, image_uri=image, format=ModelEntry.Format.HF,
        architecture=export.facts.architecture, parameter_count=export.facts.parameters,
        hf_facts=export.as_dict(), vllm=settings,
        command=[] if is_vllm else list(SERVE_COMMAND), runtime=runtime, args=args,
        state=ModelEntry.State.UPLOADING)


def _under_job_output(job: Job, artifact: str) -> str:
    """`artifact` when it lies under the job's own output folder (under its team's prefix).
    Serving replicas read the weights, and the packaging job writes beside them, with the
    product's credentials, so a path a trainer printed in a checkpoint event must not lead
    either into another team's folder."""
    folder = artifact.rstrip("/")
    inside = folder.startswith(f"{job.output_uri.rstrip('/')}/")
    if not inside or any(part in (".", "..") for part in folder.split("/")[3:]):
        raise RegistryError(f"{folder} is outside job #{job.pk}'s output folder "
                            f"({job.output_uri}): a checkpoint is served only from the job's "
                            "own folder; register the job's final export instead (no step)")
    return folder


def triton_image() -> str:
    """Triton's image in the catalogue (prediction_images.csv)."""
    return next(image.uri for image in prediction_images() if image.framework == "triton")


def _args(runtime: str) -> list[str]:
    if runtime == ModelEntry.Runtime.TRITON:
        return list(TRITON_ARGS)
    if runtime in TRITON_RUNTIMES:
        return list(TENSORRT_ARGS)
    return [] if runtime == ModelEntry.Runtime.EAGER else ["--runtime", runtime]


def triton_model(args: list[str]) -> str:
    """The model a Triton container's arguments name for the predict route (the logits model
    where none is named: entries registered before generation moved inside Triton)."""
    named = [a.removeprefix(DEFAULT_MODEL_FLAG) for a in args if a.startswith(DEFAULT_MODEL_FLAG)]
    return named[-1] if named else TRITON_MODEL


def container_for(entry: ModelEntry) -> Container:
    """The entry's Model.containerSpec: the product's server answers on the default routes,
    Triton and vLLM on their own."""
    if entry.runtime == ModelEntry.Runtime.VLLM:
        return vllm_runtime.container(entry)
    routes = ({"predict_route": f"/v2/models/{triton_model(entry.args)}/infer",
               "health_route": TRITON_HEALTH_ROUTE}
              if entry.runtime in TRITON_RUNTIMES else {})
    # The compiled runtime answers only once each replica has compiled the model.
    timeout = (settings.CP_SERVING_COMPILED_DEPLOY_TIMEOUT_S
               if entry.runtime == ModelEntry.Runtime.COMPILED else 0)
    return Container(image_uri=entry.image_uri, command=list(entry.command),
                     args=list(entry.args), deployment_timeout_s=timeout, **routes)


def upload(entry_id: int) -> None:
    """Upload the entry to the Model Registry unless that is done. Safe to run twice."""
    backend = get_serving_backend()
    with transaction.atomic():
        entry = ModelEntry.objects.select_for_update().get(pk=entry_id)
        if entry.state != ModelEntry.State.UPLOADING or entry.operation_name:
            return
        container = container_for(entry)
        labels = contract_labels.model_labels(entry.pk, entry.job_id or 0, entry.team.slug)
        if entry.job_id is None:  # a folder registered on its own: no job to name
            labels.pop(contract_labels.JOB)
        try:
            op = backend.upload_model(entry.vertex_model_id, entry.display_name,
                                      entry.artifact_uri, container, labels)
        except (errors.InvalidJobSpec, errors.PermissionDenied) as exc:
            entry.transition(ModelEntry.State.FAILED, error=str(exc))
            return
        entry.operation_name = op.name
        entry.save(update_fields=["operation_name"])
        _record(entry, op.done, op.failed, op.error_message)


def reconcile(entry: ModelEntry) -> None:
    """Follow an upload in flight (called by the serving sweep)."""
    if entry.state != ModelEntry.State.UPLOADING or not entry.operation_name:
        return
    op = get_serving_backend().get_operation(entry.operation_name) \
        if "/operations/" in entry.operation_name else None
    with transaction.atomic():
        entry = ModelEntry.objects.select_for_update().get(pk=entry.pk)
        if entry.state != ModelEntry.State.UPLOADING:
            return
        if op is None:  # the upload was found done already (an earlier try made it)
            _record(entry, True, False, "")
        else:
            _record(entry, op.done, op.failed, op.error_message)


def _record(entry: ModelEntry, done: bool, failed: bool, message: str) -> None:
    if not done:
        return
    if failed:
        entry.transition(ModelEntry.State.FAILED, error=message)
    else:
        entry.transition(ModelEntry.State.READY, vertex_name=get_serving_backend().model_name(
            entry.vertex_model_id))
