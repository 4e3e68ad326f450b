"""The labels and names the control plane writes on the Vertex resources it creates.

Names are deterministic (derived from the row's primary key), so a retried call finds what an
earlier try created instead of creating a second one (DESIGN.md, "Contract between trainers and
the control plane"). Labels say which job, attempt and team a resource belongs to; every key
starting with `cp-` is the control plane's own, which a request may not set.

Google's label rules (VERTEX_FACTS.md section 1), as the checks of a CustomJob apply them: keys
and values up to 64 characters of lowercase letters, digits, `_` and `-` (any letter that is
not upper case: Google allows international ones), a key starting with a letter, at most 64
labels on a resource.
"""

from __future__ import annotations

import re

PREFIX = "cp-"
# Keys.
JOB = "cp-job"              # the job's id, on each attempt's CustomJob and the models it made
ATTEMPT = "cp-attempt"      # the attempt's number (1, 2, ...)
TEAM = "cp-team"            # the team's slug: jobs, sweeps, models, endpoints, image repositories
SWEEP = "cp-sweep"
MODEL = "cp-model"
ENDPOINT = "cp-endpoint"
PURPOSE = "cp-purpose"      # PACKAGING on the CustomJob that builds a model's package
RAY_JOB = "cp-ray-job"      # in a Ray job's submission metadata
RECOVERY_PREFIX = "cp-recovery-"  # an exported job's recovery policy, one label per setting
PACKAGING = "packaging"
# The keys the control plane writes on every attempt of a job.
ATTEMPT_KEYS = (JOB, ATTEMPT, TEAM)

MAX_CHARS = 64
MAX_LABELS = 64
# A team's slug is cut to this as a label value.
TEAM_VALUE_CHARS = 63


# --- labels --------------------------------------------------------------------------------------

def team_value(slug: str) -> str:
    return slug[:TEAM_VALUE_CHARS]


def attempt_labels(job_id: int, attempt: int, team_slug: str) -> dict[str, str]:
    """The labels of an attempt's CustomJob: with its display name, how submit finds it."""
    return {JOB: str(job_id), ATTEMPT: str(attempt), TEAM: team_value(team_slug)}


def sweep_labels(sweep_id: int, team_slug: str) -> dict[str, str]:
    return {SWEEP: str(sweep_id), TEAM: team_value(team_slug)}


def model_labels(model_id: int, job_id: int, team_slug: str) -> dict[str, str]:
    """A model uploaded from a job's weights."""
    return {MODEL: str(model_id), JOB: str(job_id), TEAM: team_value(team_slug)}


def packaging_labels(model_id: int, team_slug: str) -> dict[str, str]:
    """The CustomJob that builds a model's package: no cp-job, as it is no attempt of the
    training job (attempts are found by that label)."""
    return {MODEL: str(model_id), PURPOSE: PACKAGING, TEAM: team_value(team_slug)}


def endpoint_labels(endpoint_id: int, team_slug: str) -> dict[str, str]:
    return {ENDPOINT: str(endpoint_id), TEAM: team_value(team_slug)}


def ray_job_labels(ray_job_id: int, team_slug: str) -> dict[str, str]:
    return {TEAM: team_value(team_slug), RAY_JOB: str(ray_job_id)}


def is_reserved(key: str) -> bool:
    """A key only the control plane writes."""
    return key.startswith(PREFIX)


# --- names ---------------------------------------------------------------------------------------

_ATTEMPT_NAME = re.compile(r"cp-([1-9][0-9]{0,17})-a([1-9][0-9]{0,8})")
_CLUSTER_ID = re.compile(r"cp-cl-([0-9]{1,18})")


def job_display_name(job_id: int, attempt: int) -> str:
    """The display name of a job's attempt: `cp-<job id>-a<attempt>`."""
    return f"cp-{job_id}-a{attempt}"


def parse_job_display_name(name: str) -> tuple[int, int] | None:
    """(job id, attempt) of a display name job_display_name() wrote, else None."""
    match = _ATTEMPT_NAME.fullmatch(name) if isinstance(name, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def sweep_display_name(sweep_id: int) -> str:
    return f"cp-sweep-{sweep_id}"


def cluster_resource_id(cluster_id: int) -> str:
    """A persistent resource's id: `cp-cl-<pk>`, which no team can choose."""
    return f"cp-cl-{cluster_id}"


def parse_cluster_resource_id(resource_id: str) -> int | None:
    match = _CLUSTER_ID.fullmatch(resource_id) if isinstance(resource_id, str) else None
    return int(match.group(1)) if match else None


def ray_submission_id(ray_job_id: int) -> str:
    return f"cp-ray-{ray_job_id}"


def vertex_model_id(model_id: int) -> str:
    """A model's id in the Model Registry."""
    return f"cp-model-{model_id}"


def packaging_display_name(model_id: int) -> str:
    return f"cp-model-{model_id}-package"


def vertex_endpoint_id(endpoint_id: int) -> str:
    return f"cp-ep-{endpoint_id}"


# --- Google's rules on labels -------------------------------------------------------------------

def is_label_letter(ch: str) -> bool:
    # Google labels allow international characters: any letter that is not upper case.
    return ch.isalpha() and not ch.isupper()


def is_label_char(ch: str) -> bool:
    return is_label_letter(ch) or ch.isdigit() or ch in "_-"


def label_problem(text: str, key: bool) -> str | None:
    """Why Vertex refuses `text` as a label key (key=True) or value, or None."""
    what = "key" if key else "value"
    if len(text) > MAX_CHARS:
        return f"label {what} has {len(text)} characters; at most {MAX_CHARS}"
    if key and not text:
        return "label keys cannot be empty"
    if key and not is_label_letter(text[0]):
        return f"label key {_short(text)} must start with a lowercase letter"
    bad = sorted({ch for ch in text if not is_label_char(ch)})
    if bad:
        return (
            f"label {what} {_short(text)} has {''.join(bad)!r}: only lowercase letters, digits, "
            "'_' and '-' are allowed"
        )
    return None


def fixed_label(text: str, key: bool) -> str:
    """The nearest key or value Vertex accepts: what a refusal suggests instead."""
    fixed = "".join(ch if is_label_char(ch) else "-" for ch in text.lower())[:MAX_CHARS]
    if key and not (fixed and is_label_letter(fixed[0])):
        fixed = ("l" + fixed)[:MAX_CHARS]
    return fixed


def _short(value: object, limit: int = 60) -> str:
    """repr() cut to a length that fits in a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
