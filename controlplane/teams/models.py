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
