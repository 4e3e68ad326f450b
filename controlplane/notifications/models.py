"""Slack channels of a team, and the outbox of messages to them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from controlplane.core import secrets


class NotifyOn(models.TextChoices):
    SUBMITTED = "submitted", "Submitted to Vertex"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    PREEMPTED = "preempted", "Preempted or restarted"
    RECOVERED = "recovered", "Recovered"
    BUDGET = "budget", "Budget alert"
    QUOTA = "quota", "Waiting for quota"
    # The queue in front of Vertex (controlplane/runs/admission.py): a job admitted to Vertex,
    # or stopped at a checkpoint and requeued for another team's guarantee.
    QUEUE = "queue", "Queue: admitted, or stopped for another team"


# An SLO of one of the team's endpoints was breached or recovered. Not in NotifyOn: every
# enabled channel of the team gets these, whatever it chose to hear about its jobs.
SLO_ALERT = "slo"
# A team's cluster has been idle past the limit (and bills all the same): every enabled
# channel gets these too, since money is spent whichever jobs a channel follows.
CLUSTER_IDLE = "cluster_idle"
EVENTS = [*NotifyOn.choices, (SLO_ALERT, "SLO breached or recovered"),
          (CLUSTER_IDLE, "Cluster idle past the limit")]

DEFAULT_NOTIFY_ON = [NotifyOn.FAILED.value, NotifyOn.PREEMPTED.value, NotifyOn.RECOVERED.value,
                     NotifyOn.SUCCEEDED.value, NotifyOn.BUDGET.value, NotifyOn.QUOTA.value]


class ChannelKind(models.TextChoices):
    WEBHOOK = "webhook", "Incoming webhook"
    BOT = "bot", "Bot token and channel"


class SlackChannel(models.Model):
    team = models.ForeignKey("teams.Team", on_delete=models.CASCADE, related_name="slack_channels")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=ChannelKind.choices)
    # The webhook URL or the bot token, encrypted (controlplane/core/secrets.py); never shown
    # or returned whole.
    secret = models.TextField()
    secret_hint = models.CharField(max_length=80)
    slack_channel = models.CharField(max_length=80, blank=True)  # bot: channel id or name
    notify_on = models.JSONField(default=list)
    enabled = models.BooleanField(default=True)
    # Why delivery stopped: a permanent Slack error (revoked webhook, channel not found...).
    disabled_reason = models.TextField(blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    last_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "jobs_slackchannel"  # kept from the app it was first created in
        ordering = ["team", "name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="channel_name_per_team"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.team})"

    def set_secret(self, value: str) -> None:
        self.secret = secrets.encrypt(value)
        self.secret_hint = hint_for(self.kind, value)

    def get_secret(self) -> str:
        return secrets.decrypt(self.secret)

    def wants(self, event: str) -> bool:
        return self.enabled and event in (self.notify_on or [])


def hint_for(kind: str, value: str) -> str:
    """What may be shown of a secret: enough to tell two apart, never enough to use one."""
    tail = value[-4:] if len(value) > 12 else ""
    if kind == ChannelKind.WEBHOOK:
        return f"https://hooks.slack.com/…{tail}"
    return f"{value[:5]}…{tail}" if value.startswith("xox") else f"…{tail}"


class NotificationStatus(models.TextChoices):
    PENDING = "pending"    # waiting to be sent (again, after a transient error)
    SENDING = "sending"    # claimed by a worker
    SENT = "sent"
    FAILED = "failed"      # a permanent error, or out of tries
    # The worker died while sending: Slack may or may not have it. Not resent, so that a
    # transition never reaches a channel twice.
    UNKNOWN = "unknown"


class Notification(models.Model):
    """One message for one transition to one channel: the (channel, key) pair is unique.

    Every message the product posts is one of these, whatever it is about: a job's transition
    (`job`, with `detail`), an SLO alert (`slo_alert`, whose message is the alert's) or an idle
    cluster (`idle_flag`: one idle period of one cluster). Each row names exactly one of them.
    """

    channel = models.ForeignKey(SlackChannel, on_delete=models.CASCADE,
                                related_name="notifications")
    job = models.ForeignKey("runs.Job", on_delete=models.CASCADE, related_name="notifications",
                            null=True, blank=True)
    slo_alert = models.ForeignKey("serving.SloAlert", on_delete=models.CASCADE,
                                  related_name="notifications", null=True, blank=True)
    idle_flag = models.ForeignKey("clusters.IdleFlag", on_delete=models.CASCADE,
                                  related_name="notifications", null=True, blank=True)
    event = models.CharField(max_length=20, choices=EVENTS)
    key = models.CharField(max_length=120)
    # What the transition was (state, restart, attempt...), as it was when it happened.
    detail = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=NotificationStatus.choices,
                              default=NotificationStatus.PENDING)
    tries = models.PositiveSmallIntegerField(default=0)
    next_try_at = models.DateTimeField(default=timezone.now)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "jobs_notification"  # kept from the app it was first created in
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["channel", "key"], name="one_message_per_transition"),
            models.CheckConstraint(
                condition=models.Q(job__isnull=False, slo_alert__isnull=True,
                                   idle_flag__isnull=True)
                | models.Q(job__isnull=True, slo_alert__isnull=False, idle_flag__isnull=True)
                | models.Q(job__isnull=True, slo_alert__isnull=True, idle_flag__isnull=False),
                name="notification_about_one_thing"),
        ]
        indexes = [models.Index(fields=["status", "next_try_at"])]

    def __str__(self) -> str:
        about = (f"job {self.job_id}" if self.job_id else
                 f"SLO alert {self.slo_alert_id}" if self.slo_alert_id else
                 f"idle flag {self.idle_flag_id}")
        return f"{self.event} of {about} to {self.channel_id} ({self.status})"
