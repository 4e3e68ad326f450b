"""The one concrete action a failed job's diagnosis ends with on its page.

The logs app recognises the failure and gives each kind's general advice
(vertexplan.logparse.failures); this reads the job's own request to turn that advice into one
change to make: the field (by its request path, as the compose form and the API name it), the
value it has and the value to try ("set batch.micro_batch_size to 2 (it is 4) or turn on
model.activation_checkpointing"). Where nothing in the request explains the failure, the
general advice stays. for_failure() is pure over the job's stored request and CustomJob;
for_rows() reads a list page's requests in one query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controlplane.runs.models import Job
from vertexplan.catalog import get_machine_type
from vertexplan.catalog.hardware_regions import job_offerings, regions_offering_all
from vertexplan.checkpointing import checkpointing_mode
from vertexplan.digits import ascii_int


@dataclass(frozen=True)
class Fix:
    text: str             # "set batch.micro_batch_size to 2 (it is 4) or ..."
    fields: tuple[str, ...] = ()  # the request fields it changes: empty for general advice
    # Whether cloning the job into the compose form (prefilled with its request) is the way to
    # make the change: false where the cause is outside the request (code, IAM, the image).
    resubmit: bool = True


# The trainers' exit status for a configuration they refuse (trainers/cli.py EXIT_CONFIG): a
# bad argument or --set value, reported before any work.
EXIT_CONFIG = 2
_EXIT_STATUS = re.compile(r"non-zero status of (\d+)|exit(?:ed with)? (?:status|code) (\d+)",
                          re.IGNORECASE)
# Strategies that keep a full copy of the parameters and optimizer state on every device.
_REPLICATING = ("", "ddp", "zero1")
# How many of the job's arguments the fix quotes (a long list is cut, never the page).
_ARGS_SHOWN = 12


def _section(request: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = request.get(name)
    return value if isinstance(value, Mapping) else {}


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _flag_value(args: Sequence[Any], flag: str) -> int | None:
    """The whole-number value of ``flag`` in the job's arguments (`--flag N` or `--flag=N`)."""
    words = [str(a) for a in args]
    for i, word in enumerate(words):
        text = word.partition("=")[2] if word.startswith(flag + "=") else (
            words[i + 1] if word == flag and i + 1 < len(words) else None)
        if ascii_int(text) is not None:
            return _positive_int(ascii_int(text))
    return None


def _args(request: Mapping[str, Any]) -> list[Any]:
    args = request.get("args")
    return list(args) if isinstance(args, list) else []


@dataclass(frozen=True)
class _Case:
    request: Mapping[str, Any]
    custom_job: Mapping[str, Any]
    region: str
    summary: str  # the line that gave the failure away


def _more_checkpointing(given: Any) -> list[str]:
    """The activation checkpointing step that saves more memory than the request's, if any."""
    try:
        mode = checkpointing_mode(given)
    except ValueError:
        mode = "none"
    if mode == "none":
        return ["turn on model.activation_checkpointing (selective recomputes the attention, "
                "full every layer)"]
    if mode == "selective":
        return ["set model.activation_checkpointing to full (it is selective)"]
    return []


def _gpu_oom(case: _Case) -> Fix | None:
    """Less activation memory first (a smaller micro batch, activation checkpointing), then
    sharded state: each keeps the job as it is otherwise."""
    request = case.request
    also = _more_checkpointing(_section(request, "model").get("activation_checkpointing"))
    strategy = str(request.get("strategy") or "")
    micro = _positive_int(_section(request, "batch").get("micro_batch_size"))
    if micro is not None and micro > 1:
        first = (f"set batch.micro_batch_size to {micro // 2} (it is {micro}; the global batch "
                 "is kept by accumulating more micro batches)")
        return Fix(" or ".join([first, *also]),
                   ("batch.micro_batch_size", *(["model.activation_checkpointing"] * bool(also))))
    flag = _flag_value(_args(request), "--batch-size")
    if micro is None and flag is not None and flag > 1:
        first = f"set --batch-size in args to {flag // 2} (it is {flag})"
        return Fix(" or ".join([first, *also]),
                   ("args", *(["model.activation_checkpointing"] * bool(also))))
    if also:
        return Fix(also[0] + (" or set strategy to fsdp (shards parameters, gradients and "
                              "optimizer state)" if strategy in _REPLICATING else ""),
                   ("model.activation_checkpointing",
                    *(["strategy"] * (strategy in _REPLICATING))))
    if strategy in _REPLICATING:
        return Fix(f"set strategy to fsdp or zero3 (it is {strategy or 'ddp'}): each device "
                   "then holds a shard of the parameters and optimizer state", ("strategy",))
    accelerator = _section(request, "chief").get("accelerator_type")
    if accelerator:
        return Fix(f"set chief.accelerator_type to one with more memory than {accelerator}",
                   ("chief.accelerator_type",))
    return None


def _host_oom(case: _Case) -> Fix | None:
    """The same machine size with more memory per vCPU (n1-standard-8 -> n1-highmem-8)."""
    request = case.request
    deepspeed = _section(request, "deepspeed")
    offload = [f"turn off deepspeed.{k}" for k in ("offload_optimizer", "offload_params")
               if deepspeed.get(k)]
    name = _section(request, "chief").get("machine_type")
    machine = get_machine_type(name) if isinstance(name, str) else None
    bigger = None
    if machine is not None and machine.memory_gb:
        for word in ("-standard-", "-highcpu-"):
            if word in machine.name:
                candidate = get_machine_type(machine.name.replace(word, "-highmem-"))
                if candidate is not None and (candidate.memory_gb or 0) > machine.memory_gb:
                    bigger = candidate
                    break
    if bigger is not None:
        first = (f"set chief.machine_type to {bigger.name} ({bigger.memory_gb:g} GB; "
                 f"{machine.name} has {machine.memory_gb:g} GB)")
        return Fix(" or ".join([first, *offload]),
                   ("chief.machine_type", *(f"deepspeed.{w.split('.')[-1]}" for w in offload)))
    if offload:
        return Fix(" or ".join(offload), tuple(f"deepspeed.{w.split('.')[-1]}" for w in offload))
    return None


def _quota(case: _Case) -> Fix | None:
    """Another region that offers all of the job's hardware, or Spot's separate quota."""
    request, region = case.request, case.region
    try:
        others = [r for r in regions_offering_all(job_offerings(case.custom_job)) if r != region]
    except (TypeError, ValueError, KeyError):  # a stored CustomJob the catalogue cannot read
        others = []
    options, fields = [], []
    if others:
        shown = ", ".join(others[:3])
        options.append(f"set region to {others[0]} (it is {region}; "
                       f"{shown}{' ...' if len(others) > 3 else ''} offer this hardware)")
        fields.append("region")
    if str(request.get("scheduling_strategy") or "").upper() != "SPOT" \
            and not request.get("spot"):
        options.append("set scheduling_strategy to SPOT, which has a quota of its own")
        fields.append("scheduling_strategy")
    if not options:
        return None
    return Fix(" or ".join(options) + ", or ask for more quota for the metric named above",
               tuple(fields))


def _stockout(case: _Case) -> Fix | None:
    recovery = _section(case.request, "recovery")
    if recovery.get("fallback") or recovery.get("regions"):
        return None
    return Fix("set recovery.fallback to FLEX_START, STANDARD and recovery.regions to other "
               "regions, so a stockout moves the job instead of failing it",
               ("recovery.fallback", "recovery.regions"))


def _replica_exit(case: _Case) -> Fix | None:
    """Exit status 2 is a trainer refusing its configuration: the arguments are the change."""
    found = _EXIT_STATUS.search(case.summary)
    status = next((int(g) for g in found.groups() if g), None) if found else None
    if status != EXIT_CONFIG:
        return None
    args = [str(a) for a in _args(case.request)]
    shown = " ".join(args[:_ARGS_SHOWN]) + (" ..." if len(args) > _ARGS_SHOWN else "")
    return Fix("correct the job's args: the trainer exits with status 2 when it refuses an "
               "argument or a --set value, before any work; its ERROR line in the log names "
               f"which (args are: {shown or 'none'})", ("args",))


def _image_pull(case: _Case) -> Fix | None:
    image = case.request.get("image_uri")
    if not image:
        return None
    return Fix(f"set image_uri to an image that exists and the Vertex AI service agent may "
               f"read ({image} could not be pulled)", ("image_uri",))


def _permission(case: _Case) -> Fix | None:
    account = case.request.get("service_account") or "the project's default service account"
    return Fix(f"grant the role named above to {account}, or set service_account to an "
               "account that has it", ("service_account",))


Rule = Callable[[_Case], Fix | None]
_RULES: dict[str, Rule] = {
    "gpu_oom": _gpu_oom, "host_oom": _host_oom, "quota_exceeded": _quota,
    "stockout": _stockout, "replica_exit": _replica_exit, "image_pull": _image_pull,
    "permission_denied": _permission,
}


def for_failure(diagnosis: Mapping[str, Any], request: Any, custom_job: Any,
                region: str) -> Fix:
    """The fix for a diagnosis headline (kind, summary, fix) of a job with this request."""
    rule = _RULES.get(str(diagnosis.get("kind")))
    specific = None
    if rule is not None and isinstance(request, Mapping):
        specific = rule(_Case(request, custom_job if isinstance(custom_job, Mapping) else {},
                              str(region or ""), str(diagnosis.get("summary") or "")))
    if specific is not None:
        return specific
    return Fix(str(diagnosis.get("fix") or ""), resubmit=False)


def for_rows(jobs: Sequence[Job], diagnoses: Mapping[int, Mapping[str, Any]]) -> dict[int, Fix]:
    """for_failure() of each diagnosed job of a list page, by job id: the list reads its rows
    without their requests, so the diagnosed ones' are read here, in one query."""
    diagnosed = [job for job in jobs if diagnoses.get(job.pk)]
    if not diagnosed:
        return {}
    requests = dict(Job.objects.filter(pk__in=[job.pk for job in diagnosed])
                    .values_list("pk", "request"))
    return {job.pk: for_failure(diagnoses[job.pk], requests.get(job.pk), job.custom_job,
                                job.region) for job in diagnosed}
