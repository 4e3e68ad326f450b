"""The records the whole control plane shares."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Lease(models.Model):
    """A named, expiring lock for singleton tasks (see controlplane.core.leases)."""

    name = models.CharField(max_length=200, primary_key=True)
    holder = models.CharField(max_length=100, blank=True)
    expires_at = models.DateTimeField()

    class Meta:
        db_table = "jobs_lease"  # kept from the app it was first created in


class IdempotencyKey(models.Model):
    """A creating request sent with an ``Idempotency-Key`` header, and the answer it got.

    The unique (user, key) pair is what makes concurrent retries safe: the first request's row
    is inserted in the same transaction as the work it does, so an identical request arriving
    meanwhile waits on that row and then replays the stored answer (controlplane.core.idempotency).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="idempotency_keys")
    key = models.CharField(max_length=255)
    # sha256 of the method, path, query and the body as parsed: "the same request".
    fingerprint = models.CharField(max_length=64)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    status_code = models.PositiveSmallIntegerField()
    response_body = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"],
                                               name="core_idempotency_key_per_user")]

    def __str__(self) -> str:
        return f"{self.key} ({self.method} {self.path})"
