"""A job's recovery policy on the way in and out: the compose form's fields, the checks a
request's `recovery` object gets before anything is created (including that its checkpoints
stay readable from every region it may move to), and its form as CustomJob labels for export
and import.

    "recovery": {"strategy": "failover", "max_recoveries": 4, "tries_per_step": 2,
                 "backoff_s": 10, "backoff_cap_s": 300,
                 "fallback": ["FLEX_START", "STANDARD"], "regions": ["us-east1"]}
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from contract import labels as contract_labels
from controlplane.backends import storage
from controlplane.backends.errors import BackendError
from controlplane.runs import recovery, recovery_policy
from vertexplan.catalog import list_regions
from vertexplan.composer import JobRequest
from vertexplan.digits import ascii_int

FORM_FIELDS = ("recovery_strategy", "recovery_max_recoveries", "recovery_retries_in_place",
               "recovery_tries_per_step", "recovery_tries_per_region", "recovery_backoff_s",
               "recovery_backoff_cap_s", "recovery_fallback", "recovery_regions")
# The policy's numbers, each a form field "recovery_<key>" and a request field "<key>".
NUMBERS = ("max_recoveries", "retries_in_place", "tries_per_step", "tries_per_region",
           "backoff_s", "backoff_cap_s")
LABEL_PREFIX = contract_labels.RECOVERY_PREFIX
# Label key (after the prefix) of each number. Label values allow no ".": seconds travel as
# whole milliseconds.
NUMBER_LABELS = {"max_recoveries": "max", "retries_in_place": "in-place",
                 "tries_per_step": "step-tries", "tries_per_region": "region-tries",
                 "backoff_s": "backoff-ms", "backoff_cap_s": "backoff-cap-ms"}
MILLISECONDS = frozenset({"backoff_s", "backoff_cap_s"})


def form_fields() -> dict[str, forms.Field]:
    return {
        "recovery_strategy": forms.ChoiceField(
            label="Recovery", required=False, choices=[
                ("", "site default (spot jobs: failover)"),
                *[(name, name) for name in sorted(recovery.STRATEGIES)]],
            help_text="After a preemption or stockout Vertex's own retries did not absorb: "
                      "retry in place, then the fallbacks, then the next region."),
        "recovery_max_recoveries": forms.IntegerField(
            label="Max recoveries", required=False, min_value=0, max_value=20),
        "recovery_retries_in_place": forms.IntegerField(
            label="Retries in place", required=False, min_value=0, max_value=10,
            help_text="After a preemption, before moving on (default 2)."),
        **_limit_fields(),
        "recovery_fallback": forms.CharField(
            label="Scheduling fallback", required=False,
            help_text="In order, comma-separated: e.g. FLEX_START, STANDARD."),
        "recovery_regions": forms.CharField(
            label="Failover regions", required=False,
            help_text="In order, comma-separated: e.g. us-east1, europe-west4. Checkpoints "
                      "must be in a multi-region or dual-region bucket."),
    }


def _ranged(low: float, high: float, message: str) -> dict[str, Any]:
    return {"min_value": low, "max_value": high, "required": False, "error_messages": {
        "invalid": message, "min_value": message, "max_value": message}}


def _limit_fields() -> dict[str, forms.Field]:
    """Each step's limit and the backoff between tries, with the API's ranges."""
    whole, seconds = recovery_policy.WHOLE_RANGES, recovery_policy.SECONDS_RANGES
    text_w, text_s = recovery_policy.whole_range_text, recovery_policy.seconds_range_text
    return {
        "recovery_tries_per_step": forms.IntegerField(
            label="Tries per step", **_ranged(*whole["tries_per_step"][:2],
                                              text_w("tries_per_step")),
            help_text="After a stockout, tries on one scheduling strategy in one region "
                      "before the next (default 1)."),
        "recovery_tries_per_region": forms.IntegerField(
            label="Tries per region", **_ranged(*whole["tries_per_region"][:2],
                                                text_w("tries_per_region")),
            help_text="All steps in one region together, before the next region (0 or "
                      "empty: no limit but the steps')."),
        "recovery_backoff_s": forms.FloatField(
            label="Backoff (s)", **_ranged(*seconds["backoff_s"], text_s("backoff_s")),
            help_text="The first wait before a try; doubles, jittered, with each try at "
                      "one step."),
        "recovery_backoff_cap_s": forms.FloatField(
            label="Backoff cap (s)", **_ranged(*seconds["backoff_cap_s"],
                                               text_s("backoff_cap_s")),
            help_text="The longest wait."),
    }


def _split(text: str) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def request_from_form(cleaned: dict[str, Any]) -> dict[str, Any] | None:
    """The request's `recovery` object from the form; None when the form leaves it at the
    site default."""
    strategy = cleaned.get("recovery_strategy") or ""
    numbers = {key: cleaned.get(f"recovery_{key}") for key in NUMBERS}
    numbers = {key: value for key, value in numbers.items() if value is not None}
    fallback = _split(cleaned.get("recovery_fallback") or "")
    regions = _split(cleaned.get("recovery_regions") or "")
    if not (strategy or numbers or fallback or regions):
        return None
    out: dict[str, Any] = {"strategy": strategy or "failover"}
    for key, value in numbers.items():
        # A whole number of seconds reads as one ("10", not "10.0"), in exports too.
        out[key] = int(value) if key in MILLISECONDS and float(value).is_integer() else value
    out["fallback"] = [s.upper() for s in fallback]
    out["regions"] = regions
    return out


def form_initial(request: dict[str, Any]) -> dict[str, Any]:
    raw = request.get("recovery")
    if not isinstance(raw, dict):
        return {}
    return {"recovery_strategy": raw.get("strategy", ""),
            **{f"recovery_{key}": raw.get(key) for key in NUMBERS},
            "recovery_fallback": ", ".join(raw.get("fallback") or []),
            "recovery_regions": ", ".join(raw.get("regions") or [])}


def field_for(key: str) -> str | None:
    """The form field a `recovery.<x>` error belongs to."""
    if key == "recovery":
        return "recovery_strategy"
    name = "recovery_" + key.removeprefix("recovery.")
    return name if name in FORM_FIELDS else None


# --- checks -----------------------------------------------------------------------------------

def check(request: JobRequest) -> dict[str, list[str]]:
    """Errors of a request's recovery settings, keyed by field; {} when it has none or they
    are sound. Nothing is read from Google but the output bucket's location, and only when
    the job may change region."""
    if request.recovery is None:
        return {}
    policy, errors = recovery_policy.parse_policy(request)
    if errors:
        return errors
    home = request.region
    known = {r.name for r in list_regions()}
    unknown = [r for r in policy.regions if r not in known]
    if unknown:
        return {"recovery.regions": [f"{', '.join(unknown)}: not a Vertex training region; "
                                     f"valid: {', '.join(sorted(known))}"]}
    others = [r for r in policy.regions if r != home]
    if others:
        problem = _unreadable_elsewhere(request, others)
        if problem:
            return {"recovery.regions": [problem]}
    return {}


def _unreadable_elsewhere(request: JobRequest, regions: list[str]) -> str | None:
    """Why a job moved to `regions` could not read its checkpoints, if it could not: its
    output bucket is regional (a multi-region or dual-region one is read from anywhere)."""
    output = (request.base_output_directory or settings.CP_OUTPUT_URI).strip()
    try:
        location = storage.bucket_location(output)
    except BackendError as exc:
        return f"cannot check where {output} is kept: {exc}"
    if location is None:
        return None
    kind, where = location
    if kind in storage.READABLE_EVERYWHERE:
        return None
    return (f"the checkpoints go to {output}, a {kind or 'regional'} bucket in {where}: an "
            f"attempt moved to {', '.join(regions)} could not read them; use a multi-region "
            "or dual-region bucket (base_output_directory or CP_OUTPUT_URI)")


# --- labels -----------------------------------------------------------------------------------

def to_labels(policy: dict[str, Any] | None) -> dict[str, str]:
    """The policy as CustomJob labels (values: lowercase letters, digits, '_' and '-'; seconds
    as whole milliseconds), so a gcloud YAML or REST JSON export carries it and an import
    restores it."""
    if not policy:
        return {}
    labels = {f"{LABEL_PREFIX}strategy": str(policy.get("strategy", "failover")).lower()}
    for key, name in NUMBER_LABELS.items():
        value = policy.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            labels[f"{LABEL_PREFIX}{name}"] = str(round(value * 1000) if key in MILLISECONDS
                                                  else int(value))
    if policy.get("fallback"):
        labels[f"{LABEL_PREFIX}fallback"] = "_".join(
            s.lower().replace("_", "-") for s in policy["fallback"])
    if policy.get("regions"):
        labels[f"{LABEL_PREFIX}regions"] = "_".join(policy["regions"])
    return {k: v[:63] for k, v in labels.items()}


def _number(key: str, text: str) -> int | float | str:
    """A label's number; a value that is not one stays as written, so the check refuses it
    by field instead of dropping it."""
    number = ascii_int(text)
    if number is None:
        return text
    if key not in MILLISECONDS:
        return number
    seconds = number / 1000
    return int(seconds) if seconds.is_integer() else seconds


def from_labels(labels: dict[str, str]) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """(the policy the labels hold or None, the other labels)."""
    mine = {k: v for k, v in (labels or {}).items() if k.startswith(LABEL_PREFIX)}
    rest = {k: v for k, v in (labels or {}).items() if not k.startswith(LABEL_PREFIX)}
    if not mine:
        return None, rest
    policy: dict[str, Any] = {"strategy": mine.get(f"{LABEL_PREFIX}strategy", "failover")}
    for key, name in NUMBER_LABELS.items():
        if f"{LABEL_PREFIX}{name}" in mine:
            policy[key] = _number(key, mine[f"{LABEL_PREFIX}{name}"])
    fallback = mine.get(f"{LABEL_PREFIX}fallback", "")
    policy["fallback"] = [s.upper().replace("-", "_") for s in fallback.split("_") if s]
    regions = mine.get(f"{LABEL_PREFIX}regions", "")
    policy["regions"] = [r for r in regions.split("_") if r]
    return policy, rest


def labels_into_request(request: dict[str, Any]) -> dict[str, Any]:
    """A request whose labels carry a recovery policy (an imported export) with the policy
    moved to `recovery` (a `recovery` already given wins) and the labels left as the user's."""
    labels = request.get("labels")
    if not isinstance(labels, dict):
        return request
    policy, rest = from_labels(labels)
    if policy is None:
        return request
    out = {**request, "labels": rest}
    if not rest:
        out.pop("labels")
    out.setdefault("recovery", policy)
    return out


def with_labels(custom_job: dict[str, Any], policy: dict[str, Any] | None) -> dict[str, Any]:
    """The CustomJob to export: with its request's recovery policy as labels."""
    labels = to_labels(policy)
    if not labels:
        return custom_job
    return {**custom_job, "labels": {**(custom_job.get("labels") or {}), **labels}}
