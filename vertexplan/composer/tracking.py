"""Where a job's metrics go on Google's side: a Vertex TensorBoard, a Vertex Experiment and its
run (CustomJobSpec.tensorboard, experiment, experiment_run; VERTEX_FACTS.md section 1).

The request names them as full resource names; the formats are those of custom_job.proto's
field comments (the exact rules Vertex applies, such as the run's name starting with the
experiment's, are UNCONFIRMED, so only the shape is checked):

    tensorboard     projects/{project}/locations/{location}/tensorboards/{id}
    experiment      projects/{project}/locations/{location}/metadataStores/{store}/contexts/{name}
    experiment_run  the same, contexts/{experiment name}-{run name}
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vertexplan.composer.request import JobRequest

# request field -> CustomJobSpec field
FIELDS = {"tensorboard": "tensorboard", "experiment": "experiment",
          "experiment_run": "experimentRun"}
_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
_LOCATION = r"[a-z][a-z0-9-]{0,62}"
PATTERNS = {
    "tensorboard": re.compile(rf"projects/{_PART}/locations/{_LOCATION}/tensorboards/{_PART}"),
    "experiment": re.compile(
        rf"projects/{_PART}/locations/{_LOCATION}/metadataStores/{_PART}/contexts/{_PART}"),
}
PATTERNS["experiment_run"] = PATTERNS["experiment"]
EXAMPLES = {
    "tensorboard": "projects/my-project/locations/us-central1/tensorboards/123",
    "experiment": "projects/my-project/locations/us-central1/metadataStores/default/contexts/"
                  "my-experiment",
    "experiment_run": "projects/my-project/locations/us-central1/metadataStores/default/"
                      "contexts/my-experiment-run-1",
}

Finding = tuple[str, str, tuple[str, ...]]


@dataclass(frozen=True)
class Tracking:
    spec_fields: dict[str, str]  # the CustomJobSpec fields the request sets
    errors: tuple[Finding, ...] = ()


def read_tracking(request: JobRequest) -> Tracking:
    """The request's tracking fields, checked, as the CustomJobSpec's fields."""
    given = {"tensorboard": request.tensorboard, "experiment": request.experiment,
             "experiment_run": request.experiment_run}
    errors: list[Finding] = []
    for key, pattern in PATTERNS.items():
        value = given[key]
        if value in (None, ""):
            continue
        if not isinstance(value, str) or not pattern.fullmatch(value):
            errors.append((key, f"must be a full resource name such as {EXAMPLES[key]}", ()))
    if request.experiment_run and not request.experiment:
        errors.append(("experiment_run", "an experiment run belongs to an experiment: give "
                       "experiment as well", ()))
    return Tracking(spec_fields={name: given[key] for key, name in FIELDS.items()
                                 if isinstance(given[key], str) and given[key]},
                    errors=tuple(errors))
