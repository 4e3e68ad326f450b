"""The CustomJob one attempt of a composed job is submitted as."""

from __future__ import annotations

import copy
from typing import Any


def for_attempt(custom_job: dict[str, Any], *, display_name: str, labels: dict[str, str],
                output_uri: str) -> dict[str, Any]:
    """The CustomJob of one attempt: deterministic display name, labels and output folder.

    The user's own labels are kept beside the control plane's; a base_output_directory the
    user chose is kept (every attempt shares it, so a new attempt resumes from its
    checkpoints), otherwise the job's folder under CP_OUTPUT_URI is used.
    """
    job = {**custom_job, "displayName": display_name,
           "labels": {**(custom_job.get("labels") or {}), **labels}}
    spec = dict(custom_job["jobSpec"])
    spec.setdefault("baseOutputDirectory", {"outputUriPrefix": output_uri})
    job["jobSpec"] = spec
    return job


def with_env(custom_job: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """A copy of the CustomJob in which every pool's container (or Python package) also has
    the variables of `env` that it does not set itself: what a user wrote wins."""
    if not env:
        return custom_job
    job = copy.deepcopy(custom_job)
    for pool in (job.get("jobSpec") or {}).get("workerPoolSpecs") or []:
        runs = (pool or {}).get("containerSpec") or (pool or {}).get("pythonPackageSpec")
        if not runs:
            continue
        own = list(runs.get("env") or [])
        taken = {entry.get("name") for entry in own}
        runs["env"] = own + [{"name": name, "value": value} for name, value in env.items()
                             if name not in taken]
    return job
