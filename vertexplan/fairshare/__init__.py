"""Fair share between teams in front of Vertex: quotas with guarantees and borrowing, priorities,
and preemption at checkpoints (the admission decision, pure; the control plane applies it)."""

from vertexplan.fairshare.admission import check_fits_guarantee, decide
from vertexplan.fairshare.model import (
    PRIORITIES,
    Decisions,
    Flavor,
    Job,
    Preemption,
    Refusal,
    State,
    TeamQuota,
    TooBig,
    Waiting,
    check_fits_project,
    rank,
)

__all__ = [
    "PRIORITIES",
    "Decisions",
    "Flavor",
    "Job",
    "Preemption",
    "Refusal",
    "State",
    "TeamQuota",
    "TooBig",
    "Waiting",
    "check_fits_guarantee",
    "check_fits_project",
    "decide",
    "rank",
]
