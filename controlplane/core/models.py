"""The records the whole control plane shares."""

from __future__ import annotations

from django.db import models


class Lease(models.Model):
    """A named, expiring lock for singleton tasks (see controlplane.core.leases)."""

    name = models.CharField(max_length=200, primary_key=True)
    holder = models.CharField(max_length=100, blank=True)
    expires_at = models.DateTimeField()

    class Meta:
        db_table = "jobs_lease"  # kept from the app it was first created in
