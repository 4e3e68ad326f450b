"""The rule for "this line says a preemption happened": what the emulator, Vertex and Compute
Engine write is an event; look-alike lines a job's own code prints (class names, handlers,
comments, URLs, quota names) are not."""

from __future__ import annotations

import pytest

from controlplane.core.preemption_lines import says_preempted
from controlplane.logs import restarts
from controlplane.runs import recovery
from controlplane.runs.models import Job
from tests.logs.test_restart_detection import Log

SAYS = [
    "Spot VM preempted (preemption 1): replicas get SIGTERM and 30s before SIGKILL.",
    "Replica workerpool0-0 was preempted, exit code 143",
    "Replica workerpool0-0 was stopped: received SIGTERM",
    "The job was preempted 7 times, more than the 6 restarts allowed (STOCKOUT).",
    "Instance was PREEMPTED by Compute Engine",
    "Preemption notice: the VM stops in 30 s",
    "worker 3 got SIGTERM, saving a checkpoint",
    "SIGTERM received; stopping after this step",
    "Replica workerpool0-0 exited: killed by signal SIGTERM",  # the emulator's restart policy
]
LOOK_ALIKES = [
    "(PreemptionWatcher pid=4242) started",
    "class PreemptionWatcher:",
    "ray.exceptions.ActorDiedError: The actor PreemptedActor died",
    "if was_preempted(): resume()",
    "def on_preempted(self): ...",
    "see https://cloud.google.com/compute/docs/instances/preemptible for details",
    "docs: /compute/docs/instances/preempted-instances",
    "quota custom_model_training_preemptible_nvidia_t4_gpus: 8",
    "# we handle SIGTERM below",
    "signal.signal(signal.SIGTERM, handler)",
    "installing sigterm_handler",
    "preemptible=True",
    "PREEMPTED_STEP=100 written to the config",
    "checkpoint saved at step 300 (preempt-safe)",
    "loss 0.31 step 120 preemption_budget=3",
]


@pytest.mark.parametrize("line", SAYS)
def test_what_the_platform_writes_is_a_preemption(line: str) -> None:
    assert says_preempted(line)


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_a_look_alike_line_is_not(line: str) -> None:
    assert not says_preempted(line)


def test_a_look_alike_line_makes_no_notice_event_and_no_restart(running_job: Job) -> None:
    log = Log(running_job)
    for line in LOOK_ALIKES:
        log.line(line, "workerpool0-0")
    assert restarts.refresh(running_job.pk, force=True) == 0
    assert not running_job.events.filter(kind=restarts.NOTICE).exists()
    assert not running_job.restart_records.exists()
    log.line(SAYS[1], "workerpool0-0")
    restarts.refresh(running_job.pk, force=True)
    assert running_job.events.filter(kind=restarts.NOTICE).count() == 1


def test_a_failed_spot_attempt_is_a_preemption_only_when_its_error_says_so() -> None:
    def cause(message: str) -> recovery.Failure:
        return recovery.classify(state="JOB_STATE_FAILED", error_code=13,
                                 error_message=message, spot=True, preempted=False)

    assert cause("The replica workerpool0-0 exited with a non-zero status of 143.") \
        == recovery.Failure.PREEMPTION
    assert cause("Replica workerpool0-0 was preempted") == recovery.Failure.PREEMPTION
    assert cause("Traceback ... PreemptionWatcher raised KeyError") \
        == recovery.Failure.APPLICATION
