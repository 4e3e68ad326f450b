"""Rules on the CustomJob's own fields and the job-wide parts of its spec."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from contract import labels
from vertexplan.catalog.errors import FieldError, entry
from vertexplan.catalog.rules._common import json_type, short, wrong_type
from vertexplan.catalog.view import JobView, read

DISPLAY_NAME_MAX = 128
# Google's rules on labels are the contract's (contract/labels.py): the control plane writes
# its own labels by them too.
LABELS_MAX = labels.MAX_LABELS  # Google Cloud's limit on labels per resource

_NETWORK = re.compile(r"projects/([^/]+)/global/networks/([^/]+)")
_NETWORK_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")


def check_job_object(view: JobView) -> Iterator[FieldError]:
    if not isinstance(view.job, dict):
        yield FieldError(
            "",
            f"the CustomJob must be a JSON object with displayName and jobSpec, "
            f"got {json_type(view.job)}",
        )


def check_display_name(view: JobView) -> Iterator[FieldError]:
    if not isinstance(view.job, dict):
        return
    f = read(view.job, "", "displayName")
    if not f.present or f.raw == "":
        yield FieldError(
            "displayName",
            "displayName is required: the job's name in the console, "
            f"up to {DISPLAY_NAME_MAX} characters",
        )
    elif not isinstance(f.raw, str):
        yield wrong_type(f, "a string", '"finetune-llm-a100"')
    elif len(f.raw) > DISPLAY_NAME_MAX:
        yield FieldError(
            "displayName",
            f"displayName has {len(f.raw)} characters; Vertex takes at most {DISPLAY_NAME_MAX}",
        )
    elif has_control_characters(f.raw):
        yield FieldError(
            "displayName",
            "displayName cannot hold control characters (new lines, tabs, escapes): "
            "one line of printable text",
        )


def has_control_characters(text: str) -> bool:
    """Line breaks of any kind (YAML and Python also break at U+0085, U+2028, U+2029) and
    every other control character: what could end a line or a comment in an export."""
    return any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in text)


def check_labels(view: JobView) -> Iterator[FieldError]:
    f = read(view.job, "", "labels")
    if not f.present:
        return
    if not isinstance(f.raw, dict):
        yield wrong_type(f, "an object of string keys and values", '{"team": "vision"}')
        return
    if len(f.raw) > LABELS_MAX:
        yield FieldError("labels", f"labels has {len(f.raw)} entries; at most {LABELS_MAX}")
    for key, value in f.raw.items():
        path = entry("labels", key)
        problem = labels.label_problem(key, key=True)
        if problem:
            yield FieldError(path, problem, (labels.fixed_label(key, key=True),))
            continue
        if not isinstance(value, str):
            yield FieldError(
                path, f"label {key!r} must have a string value, got {json_type(value)}"
            )
            continue
        problem = labels.label_problem(value, key=False)
        if problem:
            yield FieldError(path, problem, (labels.fixed_label(value, key=False),))


def check_network(view: JobView) -> Iterator[FieldError]:
    f = read(view.job_spec.value, "jobSpec", "network")
    if not f.present or f.raw == "":
        return
    if not isinstance(f.raw, str):
        yield wrong_type(f, "a string", "projects/123456789012/global/networks/my-vpc")
        return
    match = _NETWORK.fullmatch(f.raw)
    if not match:
        yield FieldError(
            f.path,
            f"jobSpec.network must be projects/{{project_number}}/global/networks/{{name}} "
            f"(a VPC peered with Google's services), got {short(f.raw)}",
        )
        return
    project, name = match.groups()
    if not (project.isascii() and project.isdigit()):
        yield FieldError(
            f.path,
            f"jobSpec.network names project {project!r}: Vertex needs the project "
            "number (digits, shown on the project's dashboard), not its id",
        )
    if not _NETWORK_NAME.fullmatch(name):
        yield FieldError(
            f.path,
            f"jobSpec.network: {short(name)} is not a VPC network name (lowercase "
            "letters, digits and '-', starting with a letter, at most 63 characters)",
        )


def check_service_account(view: JobView) -> Iterator[FieldError]:
    f = read(view.job_spec.value, "jobSpec", "serviceAccount")
    if not f.present or f.raw == "":
        return  # empty: the Custom Code Service Agent runs the job
    if not isinstance(f.raw, str):
        yield wrong_type(f, "a service account email")
    elif not _EMAIL.fullmatch(f.raw):
        yield FieldError(
            f.path,
            f"jobSpec.serviceAccount must be a service account email such as "
            f"trainer@my-project.iam.gserviceaccount.com, got {short(f.raw)}",
        )


def check_output_directory(view: JobView) -> Iterator[FieldError]:
    f = read(view.job_spec.value, "jobSpec", "baseOutputDirectory")
    if not f.present:
        return
    if not isinstance(f.raw, dict):
        yield wrong_type(f, "an object", '{"outputUriPrefix": "gs://my-bucket/runs/1"}')
        return
    uri = read(f.raw, f.path, "outputUriPrefix")
    if not uri.present or uri.raw == "":
        yield FieldError(
            uri.path,
            "baseOutputDirectory.outputUriPrefix is required: the gs:// folder that "
            "becomes AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR",
        )
        return
    if not isinstance(uri.raw, str):
        yield wrong_type(uri, "a gs:// URI")
        return
    if not uri.raw.startswith("gs://"):
        fix = ()
        if uri.raw.startswith("/gcs/"):
            fix = ("gs://" + uri.raw.removeprefix("/gcs/"),)
        yield FieldError(
            uri.path,
            f"outputUriPrefix must be a Cloud Storage URI starting with gs://, "
            f"got {short(uri.raw)}",
            fix,
        )
        return
    bucket = uri.raw.removeprefix("gs://").split("/", 1)[0]
    if not _BUCKET.fullmatch(bucket):
        yield FieldError(
            uri.path,
            f"outputUriPrefix: {short(bucket)} is not a bucket name (3-222 lowercase "
            "letters, digits, '.', '_' or '-')",
        )


def check_reserved_ip_ranges(view: JobView) -> Iterator[FieldError]:
    f = read(view.job_spec.value, "jobSpec", "reservedIpRanges")
    if not f.present:
        return
    if not isinstance(f.raw, list) or not all(isinstance(r, str) and r for r in f.raw):
        yield wrong_type(f, "a list of reserved IP range names", '["vertex-range-1"]')
        return
    network = read(view.job_spec.value, "jobSpec", "network")
    if f.raw and not (network.present and network.raw):
        yield FieldError(
            f.path, "reservedIpRanges are ranges of a peered VPC: set jobSpec.network as well"
        )


def check_flags(view: JobView) -> Iterator[FieldError]:
    for key in ("enableWebAccess", "enableDashboardAccess"):
        f = read(view.job_spec.value, "jobSpec", key)
        if f.present and not isinstance(f.raw, bool):
            yield wrong_type(f, "true or false")
