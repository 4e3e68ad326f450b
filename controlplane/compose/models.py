"""Team job templates and the composer's per-team settings.

Kept apart from controlplane/runs/models.py (which imports this module at its end) so the
composer's tables live with the composer.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone


class MemoryPolicy(models.TextChoices):
    REFUSE = "refuse", "Refuse a job that does not fit in memory"
    WARN = "warn", "Warn, and let the job be submitted"


class ComposerSettings(models.Model):
    """How strict the composer is for one team (no row: the defaults)."""

    team = models.OneToOneField("teams.Team", on_delete=models.CASCADE,
                                related_name="composer_settings")
    memory_policy = models.CharField(max_length=10, choices=MemoryPolicy.choices,
                                     default=MemoryPolicy.REFUSE)

    class Meta:
        db_table = "jobs_composersettings"  # kept from the app it was first created in
        verbose_name_plural = "composer settings"

    def __str__(self) -> str:
        return f"composer settings of {self.team}"


def memory_policy_for(team: Any) -> str:
    if team is None or getattr(team, "pk", None) is None:
        return MemoryPolicy.REFUSE
    row = ComposerSettings.objects.filter(team=team).first()
    return row.memory_policy if row else MemoryPolicy.REFUSE


class JobTemplate(models.Model):
    """A composed job saved by a team, to start new jobs from (the request, not the CustomJob:
    a template composes again with the catalogue and defaults of the day it is used)."""

    team = models.ForeignKey("teams.Team", on_delete=models.CASCADE, related_name="job_templates")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    request = models.JSONField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                   null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "jobs_jobtemplate"  # kept from the app it was first created in
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="one_template_name_per_team"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.team})"
