from enum import StrEnum


class TeamsAuditListAction(StrEnum):
    BUDGET_CREATE = "budget.create"
    BUDGET_DELETE = "budget.delete"
    BUDGET_UPDATE = "budget.update"
    CHANNEL_CREATE = "channel.create"
    CHANNEL_DELETE = "channel.delete"
    CHANNEL_UPDATE = "channel.update"
    CLUSTER_DELETE_IDLE = "cluster.delete_idle"
    JOB_CANCEL = "job.cancel"
    JOB_CLONE = "job.clone"
    JOB_RESUBMIT = "job.resubmit"
    JOB_SUBMIT = "job.submit"
    JOB_TAG = "job.tag"
    MEMBER_ADD = "member.add"
    MEMBER_CHANGE = "member.change"
    MEMBER_REMOVE = "member.remove"
    POLICY_UPDATE = "policy.update"
    QUOTA_UPDATE = "quota.update"
    SWEEP_CANCEL = "sweep.cancel"
    SWEEP_SUBMIT = "sweep.submit"
    TEMPLATE_DELETE = "template.delete"
    TEMPLATE_SAVE = "template.save"
    TOKEN_CREATE = "token.create"
    TOKEN_REVOKE = "token.revoke"
    TRACKING_UPDATE = "tracking.update"

    def __str__(self) -> str:
        return str(self.value)
