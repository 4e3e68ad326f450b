"""How long a composed job is expected to run, for its estimate: steps x a measured step time.

The built-in trainer's ``--steps N`` says how many steps the job takes (its default when the
arguments do not say). A step time is *measured*: the newest job of the same team that ran the
same machines, replicas and arguments to SUCCEEDED, its running time over its last step.
Without a measurement, a job whose request gives the model's size has a *modelled* step time
(vertexplan.perf.expected_step: the step's FLOPs over the devices' peak at an assumed
utilisation), labelled as such. Without either, the estimate falls back to the timeout, which
is then shown as the ceiling it is (the most Vertex lets the job run), never as the expected
cost.
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

from controlplane.runs.models import Job, JobKind, JobState
from controlplane.teams.models import Team
from vertexplan.composer import Composition, parallelism
from vertexplan.digits import ascii_int
from vertexplan.perf.expected_step import ExpectedStep

TRAINER_DEFAULT_STEPS = 300  # trainers/config.py: RunConfig.steps


def trainer_steps(custom_job: dict[str, Any]) -> int | None:
    """The steps the built-in trainer runs (``--steps N``, else its default); None for a job
    that runs a command of its own."""
    pools = (custom_job.get("jobSpec") or {}).get("workerPoolSpecs") or []
    container = (pools[0] or {}).get("containerSpec") if pools else None
    if not isinstance(container, dict) \
            or container.get("command") not in parallelism.BUILTIN_COMMANDS:
        return None
    args = container.get("args") or []
    steps = None
    for flag, value in itertools.pairwise(args):
        if flag == "--steps" and ascii_int(value) is not None:
            steps = ascii_int(value)
    return steps if steps is not None else TRAINER_DEFAULT_STEPS


def _shape(custom_job: dict[str, Any]) -> list[Any]:
    """What decides a step's time: each pool's machine, replicas and what it runs."""
    pools = (custom_job.get("jobSpec") or {}).get("workerPoolSpecs") or []
    return [[p.get("machineSpec"), str(p.get("replicaCount", "1")), p.get("containerSpec"),
             p.get("pythonPackageSpec")] if isinstance(p, dict) else p for p in pools]


def measured_step_time(team: Team | None, custom_job: dict[str, Any]) -> Decimal | None:
    """Seconds per step of the newest succeeded job of ``team`` shaped as ``custom_job``."""
    if team is None:
        return None
    shape = _shape(custom_job)
    done = (Job.objects.filter(team=team, kind=JobKind.JOB, state=JobState.SUCCEEDED,
                               started_at__isnull=False,
                               ended_at__isnull=False, last_step__gt=0)
            .order_by("-ended_at").only("custom_job", "started_at", "ended_at", "last_step"))
    for job in done[:200]:
        if _shape(job.custom_job) == shape:
            seconds = Decimal((job.ended_at - job.started_at).total_seconds())
            return (seconds / job.last_step).quantize(Decimal("0.001"))
    return None


def modelled_step_time(composition: Composition) -> tuple[Decimal | None, str]:
    """The composition's modelled seconds per step (to the millisecond, at least 1 ms) and the
    model's figures, or (None, "") when its request gives no model to model it from."""
    modelled = composition.expected_step
    if not isinstance(modelled, ExpectedStep):
        return None, ""
    seconds = Decimal(modelled.seconds.numerator) / Decimal(modelled.seconds.denominator)
    return max(seconds.quantize(Decimal("0.001")), Decimal("0.001")), modelled.explain()
