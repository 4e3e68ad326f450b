"""Teams and who is in them, with which role."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "jobs_team"  # kept from the app it was first created in

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="memberships")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)

    class Meta:
        db_table = "jobs_membership"  # kept from the app it was first created in
        constraints = [models.UniqueConstraint(fields=["user", "team"], name="one_role_per_team")]

    @property
    def can_submit(self) -> bool:
        return self.role in (Role.ADMIN, Role.MEMBER)

    @property
    def name(self) -> str:
        """The member's username: what the audit log shows for a membership."""
        return self.user.get_username()

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class TeamPolicy(models.Model):
    """What a team's jobs may use, set by the team's admins (controlplane/teams/policy.py).

    With no row, or empty fields, a team writes only under `<CP_OUTPUT_URI>/<slug>/`, runs as
    Vertex's default service account, on no VPC network, without reservations and without
    web access to its replicas: nothing another team could own.
    """

    team = models.OneToOneField(Team, on_delete=models.CASCADE, related_name="policy")
    # gs://bucket/prefix the team's jobs write under; "" = <CP_OUTPUT_URI>/<slug>.
    output_prefix = models.CharField(max_length=1024, blank=True)
    # Prefixes the team wrote under before and moved away from: its old jobs' outputs are
    # there, so they stay reserved for it (no other team may claim them, policy.update).
    released_prefixes = models.JSONField(default=list, blank=True)
    service_accounts = models.JSONField(default=list, blank=True)
    networks = models.JSONField(default=list, blank=True)
    reservations = models.JSONField(default=list, blank=True)
    allow_web_access = models.BooleanField(default=False)
    # A running cluster idle this many minutes is deleted (controlplane/clusters/idle.py);
    # 0: never, the team is only told.
    delete_idle_clusters_after_min = models.PositiveIntegerField(default=0)
    # Hang detection (controlplane/logs/health.py): a running job silent for max(hang_k x its
    # p95 step interval, hang_floor_s) is a suspected hang; restart_on_hang: it is then
    # cancelled and resubmitted from its newest committed checkpoint (else only alerted).
    hang_k = models.PositiveSmallIntegerField(default=10)
    hang_floor_s = models.PositiveIntegerField(default=300)
    restart_on_hang = models.BooleanField(default=False)
    # A job waiting in the queue in front of Vertex (controlplane/runs/admission.py) longer
    # than this many minutes is told to the team's Slack channels that hear of the queue,
    # once per wait; 0: never.
    queue_wait_alert_min = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"policy of {self.team}"


class TrackingSettings(models.Model):
    """Where a team's jobs log their runs besides this product: a W&B entity and project, and
    the API key they log with (controlplane/teams/tracking.py).

    The key is stored encrypted (controlplane/core/secrets.py) and never shown or returned:
    pages and the API say only whether one is set."""

    team = models.OneToOneField(Team, on_delete=models.CASCADE, related_name="tracking")
    wandb_entity = models.CharField(max_length=128, blank=True)
    wandb_project = models.CharField(max_length=128, blank=True)
    wandb_api_key = models.TextField(blank=True)  # a Fernet token; "" = none
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"tracking of {self.team}"


class QueuePriority(models.TextChoices):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


class TeamQuota(models.Model):
    """A team's share of the project's accelerators, set by site admins (is_staff): per
    accelerator type, region and spot/on-demand (as Vertex's quotas count them), a guaranteed
    number and how many more it may borrow from the other teams' unused guarantees; the highest
    priority its jobs may ask for; whether its jobs without checkpoints may be stopped for
    another team's guarantee (losing their work). Read by the admission in front of Vertex
    (controlplane/runs/admission.py); controlplane/teams/quotas.py checks what is written.

    With no row a team has no guarantee: its jobs borrow what the others leave free."""

    team = models.OneToOneField(Team, on_delete=models.CASCADE, related_name="quota")
    # [{"accelerator": "NVIDIA_TESLA_A100", "region": "us-central1", "spot": false,
    #   "guarantee": 8, "borrowing_limit": 8 (null: no limit)}]
    flavors = models.JSONField(default=list, blank=True)
    max_priority = models.CharField(max_length=8, choices=QueuePriority.choices,
                                    default=QueuePriority.NORMAL)
    preempt_without_checkpoint = models.BooleanField(default=False)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"quota of {self.team}"
