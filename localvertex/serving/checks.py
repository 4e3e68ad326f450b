"""The checks Vertex makes on Model Registry and endpoint requests, with the same messages and
status codes (parents, label filters and pages: core/resources.py)."""

from __future__ import annotations

import re

from localvertex.core.errors import invalid
from localvertex.serving.model_servers import AUTOSCALING_METRICS

ENDPOINT_NAME = re.compile(r"^(projects/[^/]+/locations/[^/]+)/endpoints/([^/]+)$")
MODEL_NAME = re.compile(r"^(projects/[^/]+/locations/[^/]+)/models/([^/@]+)(@[^/]+)?$")
# CreateEndpointRequest.endpoint_id: up to 63 of [a-z0-9-] starting with a letter, or up to
# 9 digits without a leading zero. UploadModelRequest.model_id: up to 63 of [a-z0-9_-], not
# starting with a digit or '-'. DeployedModel.id: 1-10 digits.
ENDPOINT_ID = re.compile(r"^(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?|[1-9][0-9]{0,8})$")
MODEL_ID = re.compile(r"^[a-z_][a-z0-9_-]{0,62}$")
DEPLOYED_ID = re.compile(r"^[0-9]{1,10}$")


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
