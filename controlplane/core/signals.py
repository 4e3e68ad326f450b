"""The signals a lower app sends so that a higher one can act, without the lower one knowing.

Each is sent by the one app that owns the fact and received by apps above it (their receivers
are connected in their AppConfig.ready()). Receivers run in the order of INSTALLED_APPS, which
is the order of the layers: logs' restart detection runs before costs' spend, which reads it.
Ids and model instances travel as keyword arguments, named in each signal's comment.
"""

from __future__ import annotations

from django.dispatch import Signal

# runs: a job's state changed (job, event: the timeline's JobEvent). Sent inside the
# transaction that changed it; receivers that talk to the outside world wait for its commit.
job_state_changed = Signal()

# runs: an attempt's CustomJob was created on the backend (job, attempt).
attempt_submitted = Signal()

# runs: the reconciler is about to read a job's current attempt (job_id, force: whether an
# attempt just ended). Restart detection brings the job's restarts up to date first, since how
# an ending attempt is classified depends on them.
restarts_due = Signal()

# runs: the reconciler compared a job with the backend (job_id): what it costs may have changed.
job_reconciled = Signal()

# runs: the reconcile sweep found a page of jobs (job_ids) as the backend says they are, with
# nothing for the job to record: each is due what restarts_due (force=False) and then
# job_reconciled ask for one job, asked once for the page so that a receiver reads the page's
# rows together (a few queries a page, not a few a job).
jobs_reconciled = Signal()

# logs: a running job's health changed to suspected_hang or straggler (job, event: the
# JobEvent that says why); sent inside the transaction that records it.
job_health_changed = Signal()

# logs: a restart or preemption of a replica was recorded (job, record: JobRestart,
# created: a new record, resumed_now: the replica just resumed).
restart_recorded = Signal()

# runs: a job has waited in the queue in front of Vertex past its team's limit (job, detail:
# waited_min, limit_min, reason, place, earliest_start, attempt); sent once per wait, inside
# the admission round's transaction.
queue_wait_long = Signal()

# costs: a team's month's spend crossed its budget (team, crossing: BudgetCrossing).
budget_crossed = Signal()

# serving: an endpoint's SLO was breached or recovered (alert: SloAlert).
slo_alert_raised = Signal()

# clusters: a running cluster has been idle past CP_CLUSTER_IDLE_FLAG_S (flag: IdleFlag); sent
# once per idle period, inside the transaction that records the flag.
cluster_idle_flagged = Signal()

# clusters: a cluster idle past its team's limit was deleted by that policy (flag: its idle
# period's IdleFlag, idle_minutes, policy_minutes); sent inside the deletion's transaction.
cluster_idle_deleted = Signal()
