"""The vllm runtime: a Hugging Face model on Model Garden's prebuilt vLLM container
(vertexplan/serving_vllm.py holds the documented spec and the fit check).

A vllm entry is registered for a GPU shape, as Model Garden's notebooks upload one Model per
shape: the machine's GPUs are the tensor parallel size in the container's args, which a Model
cannot change once uploaded. Registering checks that the model fits those GPUs; deploying checks
that the deployment's machine has as many GPUs, and that the model fits that machine's GPUs (a
deployment may choose another GPU type with the same count). Each refusal names the field and
gives the figures.
"""

from __future__ import annotations

from typing import Any

from controlplane.backends.serving_base import Container
from controlplane.serving import hardware
from controlplane.serving.models import ModelEntry
from vertexplan import serving_vllm
from vertexplan.catalog import allowed_accelerators, get_accelerator, get_machine_type
from vertexplan.hf_export import facts_from


class VllmRefused(ValueError):
    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def gpus_of(machine_type: str, accelerator_type: str = "",
            accelerator_count: int = 0) -> tuple[str, int]:
    """(accelerator, count) of a machine: its own GPUs (a2, a3, g2) unless others are named,
    or an n1 machine's chosen ones."""
    if refusal := hardware.machine_refusal(machine_type):
        raise VllmRefused(refusal, "machine_type")
    machine = get_machine_type(machine_type)
    built_in = hardware.built_in_gpus(machine) if machine is not None else None
    if built_in is not None and not accelerator_type:
        return built_in
    if not accelerator_type:
        raise VllmRefused(f"vLLM serves on NVIDIA GPUs and {machine_type} has none: choose a GPU "
                          "machine (e.g. g2-standard-8 with 1 x NVIDIA_L4, a2-ultragpu-1g with 1 "
                          "x NVIDIA_A100_80GB) or an n1 machine with an accelerator_type",
                          "machine_type")
    allowed = allowed_accelerators(machine_type)
    if accelerator_type not in allowed:
        raise VllmRefused(f"{machine_type} takes no {accelerator_type} (it takes: "
                          f"{', '.join(sorted(allowed)) or 'none'})", "accelerator_type")
    count = accelerator_count or allowed[accelerator_type][0]
    if count not in allowed[accelerator_type]:
        raise VllmRefused(f"{machine_type} takes {accelerator_type} in counts of "
                          f"{', '.join(map(str, allowed[accelerator_type]))}",
                          "accelerator_count")
    return accelerator_type, count


def _memory(accelerator: str) -> int:
    record = get_accelerator(accelerator)
    if record is None or record.kind != "gpu":
        raise VllmRefused(f"{accelerator} is not an NVIDIA GPU of the catalogue",
                          "accelerator_type")
    return serving_vllm.gpu_memory_bytes(record.memory_gb)


def plan(hf_facts: dict[str, Any], *, machine_type: str, accelerator_type: str = "",
         accelerator_count: int = 0, max_model_len: int | None = None, dtype: str | None = None,
         gpu_memory_utilization: float | None = None) -> dict[str, Any]:
    """The entry's `vllm` settings for this machine, checked and with the model's fit; a
    VllmRefused naming the field otherwise."""
    facts = facts_from(hf_facts)
    accelerator, count = gpus_of(machine_type, accelerator_type, accelerator_count)
    try:
        settings = serving_vllm.settings_for(facts, count, max_model_len, dtype,
                                             gpu_memory_utilization)
    except serving_vllm.VllmSettingError as exc:
        raise VllmRefused(str(exc), exc.field) from exc
    _require_fit(facts, settings, accelerator, machine_type)
    return {"machine_type": machine_type, "accelerator_type": accelerator,
            "accelerator_count": count, "max_model_len": settings.max_model_len,
            "dtype": settings.dtype, "gpu_memory_utilization": settings.gpu_memory_utilization}


def _require_fit(facts: serving_vllm.ModelFacts, settings: serving_vllm.VllmSettings,
                 accelerator: str, machine_type: str) -> serving_vllm.Fit:
    found = serving_vllm.fit(facts, settings, _memory(accelerator))
    if not found.fits:
        raise VllmRefused(
            f"{facts.architecture} does not fit {machine_type}'s GPUs: "
            f"{found.text(facts, settings, accelerator)}; choose a machine with more or larger "
            "GPUs, a smaller max_model_len or a 16-bit dtype", "machine_type")
    return found


def settings_of(entry: ModelEntry) -> serving_vllm.VllmSettings:
    v = entry.vllm
    return serving_vllm.VllmSettings(v["max_model_len"], v["dtype"],
                                     v["gpu_memory_utilization"], v["accelerator_count"])


def fit_text(entry: ModelEntry) -> str:
    """The registered shape's fit, for the model list."""
    facts = facts_from(entry.hf_facts)
    settings = settings_of(entry)
    accelerator = entry.vllm["accelerator_type"]
    return serving_vllm.fit(facts, settings, _memory(accelerator)).text(facts, settings,
                                                                        accelerator)


def args_for(artifact_uri: str, vllm: dict[str, Any]) -> list[str]:
    return serving_vllm.container_args(artifact_uri, serving_vllm.VllmSettings(
        vllm["max_model_len"], vllm["dtype"], vllm["gpu_memory_utilization"],
        vllm["accelerator_count"]))


def container(entry: ModelEntry) -> Container:
    """Model Garden's container spec (no command: the args begin with the entrypoint)."""
    return Container(image_uri=entry.image_uri, command=list(entry.command),
                     args=list(entry.args), env=serving_vllm.container_env(entry.artifact_uri),
                     port=serving_vllm.PORT, predict_route=serving_vllm.PREDICT_ROUTE,
                     health_route=serving_vllm.HEALTH_ROUTE,
                     deployment_timeout_s=serving_vllm.DEPLOYMENT_TIMEOUT_S,
                     shared_memory_mb=serving_vllm.SHARED_MEMORY_MB)


def deploy_refusal(entry: ModelEntry, machine_type: str, accelerator_type: str,
                   accelerator_count: int) -> VllmRefused | None:
    """Why a vllm entry cannot be deployed on this machine, or None."""
    if entry.runtime != ModelEntry.Runtime.VLLM:
        return None
    try:
        accelerator, count = gpus_of(machine_type, accelerator_type, accelerator_count)
        settings = settings_of(entry)
        if count != settings.tensor_parallel_size:
            valid = ", ".join(m.name for m in hardware.serving_machines()
                              if any(settings.tensor_parallel_size in counts
                                     for counts in allowed_accelerators(m.name).values()))
            return VllmRefused(
                f"model {entry.display_name} was registered for vLLM with tensor parallel size "
                f"{settings.tensor_parallel_size} (its container's args): deploy it on "
                f"{settings.tensor_parallel_size} GPUs ({valid}), not {count}", "accelerator_count")
        _require_fit(facts_from(entry.hf_facts), settings, accelerator, machine_type)
    except VllmRefused as exc:
        return exc
    return None
