"""API tokens and the audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import connection, models
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


class RateWindow(models.Model):
    """How many API requests one rate-limit key (a scope and a user or client address) made
    in one window of its rate's period (controlplane/security/throttling.py). On PostgreSQL
    the table is UNLOGGED: a count is worth nothing after a crash, so it costs no WAL and a
    request's count commits without waiting for a disk."""

    key = models.CharField(max_length=200)
    slot = models.BigIntegerField()  # the window's number: its start time // the period
    n = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "slot"], name="rate_window_once")]

    def __str__(self) -> str:
        return f"{self.key} #{self.slot}: {self.n}"

    @classmethod
    def add(cls, key: str, slot: int, delta: int = 1) -> tuple[int, int]:
        """Add delta to the key's count in `slot`, in one statement on PostgreSQL; returns
        (that count, the count of the slot before it). The first request of a slot removes the
        key's older slots."""
        table = cls._meta.db_table
        bump = (f"INSERT INTO {table} (key, slot, n) VALUES (%s, %s, %s) "
                f"ON CONFLICT (key, slot) DO UPDATE SET n = {table}.n + EXCLUDED.n RETURNING n")
        previous = f"SELECT n FROM {table} WHERE key = %s AND slot = %s"
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(f"WITH bumped AS ({bump}) SELECT (SELECT n FROM bumped), "
                               f"COALESCE(({previous}), 0)", [key, slot, delta, key, slot - 1])
                count, before = cursor.fetchone()
            else:  # SQLite (the demo): no statement inside a WITH
                cursor.execute(bump, [key, slot, delta])
                count = cursor.fetchone()[0]
                cursor.execute(previous, [key, slot - 1])
                row = cursor.fetchone()
                before = row[0] if row else 0
            if count == 1 and delta > 0:
                cursor.execute(f"DELETE FROM {table} WHERE key = %s AND slot < %s",
                               [key, slot - 1])
        return int(count), int(before)
