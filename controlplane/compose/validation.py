"""Validating a job the same way for the form, the API and seed_demo.

A job arrives as a *job request* (the form's fields, as a dict) or as a Vertex CustomJob in its
own REST JSON; where it arrives, ``is_custom_job`` says which, once. A request is read once
(``read_request``) and checked by ``check``; a CustomJob is checked as sent by
``check_custom_job``. Errors are keyed by request field paths for a request
("chief.accelerator_count") and by CustomJob paths for a CustomJob
("jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"), so a caller always sees the path
of what it sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from controlplane.clusters import placement
from controlplane.compose import local_machine, recovery_fields, regions
from controlplane.compose.models import memory_policy_for
from controlplane.teams import job_policy
from controlplane.teams.models import Team
from vertexplan import interop
from vertexplan.catalog import validate_custom_job
from vertexplan.catalog.hardware_regions import job_offerings
from vertexplan.catalog.lookups import UnknownRegionError
from vertexplan.catalog.normalize import normalize_custom_job
from vertexplan.composer.compose import Composition, compose
from vertexplan.composer.paths import custom_job_path_for, with_suggestions
from vertexplan.composer.request import JobRequest


@dataclass
class CheckedRequest:
    request: JobRequest | None  # None: the body was not a job request at all
    composition: Composition | None
    # Keyed by request field path ("chief.accelerator_count"), or by CustomJob path when the job
    # came as a CustomJob; "" for the job as a whole.
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: dict[str, list[str]] = field(default_factory=dict)
    suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    format: str = "request"  # or "custom_job"
    memory_policy: str = "refuse"
    team: Team | None = None  # the team it was checked for (its measured step times)

    @property
    def ok(self) -> bool:
        return not self.errors


def is_custom_job(data: Any) -> bool:
    """True for Vertex's REST JSON ({"displayName", "jobSpec"}), False for a job request."""
    return isinstance(data, dict) and any(
        key in data for key in ("jobSpec", "displayName", "job_spec", "display_name"))


def read_request(data: dict[str, Any]) -> JobRequest:
    """A job request as the control plane takes it (the API's JSON, the form's fields, a
    stored job): a recovery policy carried in labels (an imported export) moved to
    ``recovery``, the name stripped; the region the request leaves out is VERTEX_REGION
    (composer.DEFAULTS)."""
    data = recovery_fields.labels_into_request(data)
    return JobRequest.from_dict({**data, "name": (data.get("name") or "").strip()})


def check(request: JobRequest, team: Team | None, *,
          memory_policy: str | None = None, team_rules: bool = True) -> CheckedRequest:
    """Compose and validate. Changes nothing: safe for a dry run. Without ``team_rules`` the
    team's policy (buckets, service accounts, networks, clusters) is not applied: an export is
    a document for running the job elsewhere, not a submission to this team."""
    policy = memory_policy or memory_policy_for(team)
    errors: dict[str, list[str]] = {}
    if team is None:
        errors["team"] = ["choose a team you can submit to"]
    # The control plane's own reading of the request first, then the composer's in one visit,
    # then the team's rules on what it composed: the request passes each layer once.
    recovery = recovery_fields.check(request)
    fields = request.to_dict()
    composition = compose(request, memory_policy=policy)
    refused: dict[str, list[str]] = {}
    placed: list[str] = []
    if team is not None and team_rules:
        refused = job_policy.violations(composition.custom_job, fields, team)
        placed = placement.violations(composition.custom_job, team)
    # In this order: the composer's, the team's rules, the recovery policy's, the cluster's,
    # then the local emulator's machine (a job that fits Vertex may not fit this one; an
    # export runs elsewhere).
    local = local_machine.local_errors(composition) if team_rules else {}
    for found in (composition.errors, refused, recovery,
                  {"job_spec_extra.persistentResourceId": placed} if placed else {}, local):
        for key, messages in found.items():
            errors.setdefault(key, []).extend(messages)
    _region_error(errors, request.region, composition.custom_job)
    return CheckedRequest(request=request, composition=composition, errors=errors,
                          warnings=composition.warnings, suggestions=composition.suggestions,
                          memory_policy=policy, team=team)


def check_custom_job(job: dict[str, Any], team: Team | None, *, region: str | None,
                     memory_policy: str = "refuse", team_rules: bool = True) -> CheckedRequest:
    """A CustomJob in REST JSON: Vertex's rules on it as sent, then the composer's on the job
    request it reads as (the strategy's configuration, memory), keyed by the sent paths."""
    region = region or settings.VERTEX_REGION
    # gcloud's single-mapping pools, scalar args and the SDK's snake_case read as REST JSON
    # before any rule runs, so each is judged as Vertex would judge it.
    job, _ = normalize_custom_job(job)
    errors: dict[str, list[str]] = {}
    suggestions: dict[str, tuple[str, ...]] = {}
    if team is None:
        errors["team"] = ["choose a team you can submit to"]
    try:
        found = validate_custom_job(job, region)
    except UnknownRegionError as exc:
        return CheckedRequest(request=None, composition=None, format="custom_job",
                              errors={"region": [regions.problem(
                                  region, job_offerings(job), menu=False) or f"{exc}"]},
                              suggestions={"region": exc.suggestions})
    for err in found:
        errors.setdefault(err.path, []).append(with_suggestions(err))
        if err.suggestions:
            suggestions.setdefault(err.path, err.suggestions)
    _region_error(errors, region, job)
    imported = interop.to_request(job, region=region)
    request = JobRequest.from_dict(recovery_fields.labels_into_request(imported.request))
    for path, messages in imported.errors.items():
        errors.setdefault(path, []).extend(messages)
    for path, messages in recovery_fields.check(request).items():
        errors.setdefault(path, []).extend(messages)
    if errors:
        return CheckedRequest(request=request, composition=None, errors=errors,
                              suggestions=suggestions, format="custom_job",
                              memory_policy=memory_policy)
    composition = compose(request, memory_policy=memory_policy)
    warnings: dict[str, list[str]] = {}
    refused: dict[str, list[str]] = {}
    if team is not None and team_rules:
        # Judged on the job as sent: the team's rules hold for what Vertex would be given.
        refused = job_policy.violations(job, request.to_dict(), team)
        for message in placement.violations(job, team):
            errors.setdefault("jobSpec.persistentResourceId", []).append(message)
    for source, target in ((composition.errors, errors), (composition.warnings, warnings),
                           (refused, errors)):
        for key, messages in source.items():
            path = custom_job_path_for(key, job) if key else ""
            target.setdefault(path, []).extend(messages)
            if key in composition.suggestions:
                suggestions.setdefault(path, composition.suggestions[key])
    return CheckedRequest(request=request, composition=composition, errors=errors,
                          warnings=warnings, suggestions=suggestions, format="custom_job",
                          memory_policy=memory_policy, team=team)


def _region_error(errors: dict[str, list[str]], region: str, custom_job: Any) -> None:
    """A region that lacks the job's hardware is an error of the region too, naming the
    regions that offer it all (the composer says so on each machine that is not offered). It
    replaces the composer's "not a Vertex training region", which it says again."""
    wrong = regions.problem(region, job_offerings(custom_job), menu=False)
    if wrong:
        errors["region"] = [wrong]


def nested(errors: dict[str, list[str]]) -> dict[str, Any]:
    """{"chief.accelerator_count": [...]} -> {"chief": {"accelerator_count": [...]}}."""
    out: dict[str, Any] = {}
    for key, messages in errors.items():
        if not key:
            out.setdefault("non_field_errors", []).extend(messages)
            continue
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):  # "deepspeed" and "deepspeed.x" both have errors
                child = node[part] = {"non_field_errors": child}
            node = child
        existing = node.get(leaf)
        if isinstance(existing, dict):
            existing.setdefault("non_field_errors", []).extend(messages)
        else:
            node.setdefault(leaf, []).extend(messages)
    return out
