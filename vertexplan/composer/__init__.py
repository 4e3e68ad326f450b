"""Job request -> a Vertex CustomJob (REST JSON), validated by Vertex's own rules.

A *job request* is what a user fills in (the compose form, the same fields as JSON through the
API, or an imported CustomJob read back into them), read once into a ``JobRequest``
(``request.py`` has its fields). ``compose`` turns it into the CustomJob that will be submitted,
with the strategy's launcher arguments, environment and DeepSpeed/FSDP configuration
(``parallelism.py``), runs the catalogue's validation on that CustomJob and its own rules on the
request, maps every error back to the request field that caused it, and plans the job's
per-device memory (``compose.py`` lists the stages).

    from vertexplan.composer import JobRequest, compose
    composition = compose(JobRequest.from_dict({"name": "exp", "chief": {...}}))
    composition.errors or composition.custom_job
"""

from vertexplan.composer.attempt import for_attempt, with_env
from vertexplan.composer.compose import Composition, compose
from vertexplan.composer.defaults import DEFAULT_IMAGE, DEFAULT_TPU_IMAGES, DEFAULTS, Defaults
from vertexplan.composer.parallelism import (
    BUILTIN_COMMANDS,
    DEFAULT_TRAINER_ARGS,
    STRATEGIES,
    TRAINER_COMMAND,
)
from vertexplan.composer.paths import custom_job_path_for, request_field_for, with_suggestions
from vertexplan.composer.request import POOL_FIELDS, POOL_ROLES, JobRequest, PoolRequest

__all__ = [
    "BUILTIN_COMMANDS",
    "DEFAULTS",
    "DEFAULT_IMAGE",
    "DEFAULT_TPU_IMAGES",
    "DEFAULT_TRAINER_ARGS",
    "POOL_FIELDS",
    "POOL_ROLES",
    "STRATEGIES",
    "TRAINER_COMMAND",
    "Composition",
    "Defaults",
    "JobRequest",
    "PoolRequest",
    "compose",
    "custom_job_path_for",
    "for_attempt",
    "request_field_for",
    "with_env",
    "with_suggestions",
]
