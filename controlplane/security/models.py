"""API tokens and the audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    """One of a user's API tokens. Only a SHA-256 of the key is stored: a leaked database
    gives no working token. The prefix is shown so a user can tell their tokens apart.

    A token acts as its user within the user's teams as they are at each request: leaving a
    team or losing a role takes effect on the token at once. It may be narrowed, never widened:
    to some of those teams (`teams`), or to none (`all_teams`: every team of the user), and to
    reading only (`read_only`: at most a viewer's rights, say for a dashboard).

    The scope is stored explicitly: a narrowed token whose teams are all deleted is not an
    all-teams token but a token with no teams, and authentication refuses it.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    teams = models.ManyToManyField("teams.Team", blank=True, related_name="+")
    read_only = models.BooleanField(default=False)
    all_teams = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def team_slugs(self) -> list[str]:
        return sorted(team.slug for team in self.teams.all())

    @property
    def active(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


class AuditEntry(models.Model):
    """Who did what to which object, and through which door (page, API, token)."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    # Kept when the user is deleted: the log must still say who it was.
    actor_name = models.CharField(max_length=150)
    team = models.ForeignKey("teams.Team", null=True, blank=True, on_delete=models.CASCADE,
                             related_name="audit_entries")
    action = models.CharField(max_length=40, db_index=True)
    target_type = models.CharField(max_length=40, blank=True)
    target_id = models.CharField(max_length=40, blank=True)
    target_name = models.CharField(max_length=200, blank=True)
    via = models.CharField(max_length=40, blank=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["team", "-at"], name="audit_team_at")]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.target_type} {self.target_id}"
