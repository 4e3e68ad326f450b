"""The checks Vertex makes on Model Registry and endpoint requests, with the same messages and
status codes, and the small request helpers both services share (parents, filters, pages)."""

from __future__ import annotations

import re
import time

from localvertex.core.errors import invalid
from localvertex.core.timeutil import to_timestamp
from localvertex.endpoint_runner import AUTOSCALING_METRICS

_PARENT = re.compile(r"^projects/([^/]+)/locations/([^/]+)$")
ENDPOINT_NAME = re.compile(r"^(projects/[^/]+/locations/[^/]+)/endpoints/([^/]+)$")
MODEL_NAME = re.compile(r"^(projects/[^/]+/locations/[^/]+)/models/([^/@]+)(@[^/]+)?$")
# CreateEndpointRequest.endpoint_id: up to 63 of [a-z0-9-] starting with a letter, or up to
# 9 digits without a leading zero. UploadModelRequest.model_id: up to 63 of [a-z0-9_-], not
# starting with a digit or '-'. DeployedModel.id: 1-10 digits.
ENDPOINT_ID = re.compile(r"^(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?|[1-9][0-9]{0,8})$")
MODEL_ID = re.compile(r"^[a-z_][a-z0-9_-]{0,62}$")
DEPLOYED_ID = re.compile(r"^[0-9]{1,10}$")
_LABEL_FILTER = re.compile(r'^\s*labels\.([a-z0-9_-]+)\s*=\s*"([^"]*)"\s*$')


def check_parent(parent: str) -> str:
    if not _PARENT.match(parent):
        raise invalid(f"parent {parent!r} is not projects/PROJECT/locations/LOCATION.")
    return parent


def now():
    """The current time as a protobuf Timestamp."""
    return to_timestamp(time.time_ns())


def matches(labels, filter_: str) -> bool:
    """The filter subset the control plane uses: `labels.k="v"` terms joined by AND."""
    if not filter_.strip():
        return True
    for term in re.split(r"\s+AND\s+", filter_.strip()):
        m = _LABEL_FILTER.match(term)
        if not m:
            raise invalid(f"Unsupported filter term {term!r}.")
        if labels.get(m.group(1)) != m.group(2):
            return False
    return True


def page(items: list, page_size: int, page_token: str) -> tuple[list, str]:
    try:
        start = int(page_token) if page_token else 0
    except ValueError as exc:
        raise invalid("Invalid page_token.") from exc
    size = page_size if page_size > 0 else 100
    chunk = items[start:start + size]
    more = start + size < len(items)
    return chunk, str(start + size) if more else ""


def check_resources(deployed) -> None:
    """Custom-container models run on dedicated resources; check what Vertex checks."""
    if deployed.WhichOneof("prediction_resources") != "dedicated_resources":
        raise invalid(
            "deployed_model.dedicated_resources is required: models with a custom container"
            " support only dedicated resources."
        )
    resources = deployed.dedicated_resources
    machine = resources.machine_spec
    if not machine.machine_type:
        raise invalid("dedicated_resources.machine_spec.machine_type is required.")
    if machine.accelerator_type and machine.accelerator_count < 1:
        raise invalid("machine_spec.accelerator_count must be at least 1 with an"
                      " accelerator_type.")
    if resources.min_replica_count < 1:
        raise invalid("dedicated_resources.min_replica_count must be at least 1.")
    if resources.max_replica_count and resources.max_replica_count < resources.min_replica_count:
        raise invalid("dedicated_resources.max_replica_count must not be less than"
                      " min_replica_count.")
    for spec in resources.autoscaling_metric_specs:
        _check_autoscaling_metric(spec, machine)


def _check_autoscaling_metric(spec, machine) -> None:
    if spec.metric_name not in AUTOSCALING_METRICS:
        raise invalid(
            f"autoscaling_metric_specs: unsupported metric {spec.metric_name!r}; use one of "
            f"{sorted(AUTOSCALING_METRICS)}."
        )
    if spec.metric_name.endswith("duty_cycle") and not machine.accelerator_type:
        raise invalid("the accelerator duty cycle autoscaling metric needs an"
                      " accelerator.")
    if spec.target and not 1 <= spec.target <= 100:
        raise invalid("autoscaling_metric_specs.target must be from 1 to 100.")


def check_split(split: dict[str, int], known: set[str]) -> None:
    unknown = sorted(set(split) - known)
    if unknown:
        raise invalid(f"traffic_split names deployed models that do not exist: {unknown}.")
    if any(v < 0 for v in split.values()) or sum(split.values()) != 100:
        raise invalid("traffic_split percentages must add up to 100.")
