"""`vcp jobs top` on the generated client, answered by the control plane in the test's
process (tests/client/test_job_notes_cli.py's fixture), Cloud Monitoring scripted on the fake
backend: a table of replicas in percent and GB, the accelerator columns only where a replica
has one; JSON as the API answers; Cloud Monitoring's failure exits 3 saying why."""

from __future__ import annotations

import json
from datetime import timedelta

from django.utils import timezone

from controlplane.backends import errors
from controlplane.backends.base import ReplicaMetrics
from controlplane.runs.models import Job, JobAttempt
from tests.client.test_job_notes_cli import Vcp, job, vcp  # noqa: F401 (fixtures)
from tests.fakes import FakeBackend


def test_top_prints_each_replica_in_percent_and_gb(
        vcp: Vcp, job: Job, backend: FakeBackend) -> None:  # noqa: F811 (the fixtures)
    JobAttempt.objects.create(job=job, number=1, display_name="cp-x-a1", vertex_job_id="77")
    at = timezone.now() - timedelta(minutes=1)
    backend.system_metrics["77"] = [
        ReplicaMetrics("workerpool0-0", cpu=[(at, 0.125)], memory=[(at, 0.05)],
                       memory_bytes=[(at, 1.5e9)]),
        ReplicaMetrics("workerpool1-0", cpu=[(at, 0.5)], memory_bytes=[(at, 3e8)])]

    shown = vcp("-o", "table", "jobs", "top", str(job.pk))
    assert shown.exit_code == 0, shown.output
    head, first, second = shown.stdout.splitlines()
    assert head.split() == ["REPLICA", "CPU", "MEMORY", "SAMPLED"]
    assert first.split()[:5] == ["workerpool0-0", "12.5%", "1.50", "GB", "(5.0%)"]
    assert second.split()[:4] == ["workerpool1-0", "50.0%", "0.30", "GB"]
    assert first.endswith(f"{at:%H:%M:%S} UTC")

    backend.system_metrics["77"] = [ReplicaMetrics(
        "workerpool0-0", cpu=[(at, 0.9)], accelerator=[(at, 0.97)],
        accelerator_memory=[(at, 0.5)])]
    shown = vcp("-o", "table", "jobs", "top", str(job.pk))
    assert shown.stdout.splitlines()[0].split() == [
        "REPLICA", "CPU", "MEMORY", "ACCELERATOR", "ACCELERATOR_MEMORY", "SAMPLED"]
    assert shown.stdout.splitlines()[1].split()[1:5] == ["90.0%", "-", "97.0%", "50.0%"]

    answered = json.loads(vcp("jobs", "top", str(job.pk), "--minutes", "5").stdout)
    assert answered["minutes"] == 5
    assert answered["replicas"][0]["latest"]["accelerator_percent"] == 97.0


def test_top_says_why_there_is_nothing(vcp: Vcp, job: Job,  # noqa: F811 (the fixtures)
                                       backend: FakeBackend) -> None:
    shown = vcp("-o", "table", "jobs", "top", str(job.pk))
    assert shown.exit_code == 0 and "no CustomJob on Vertex yet" in shown.stdout
    JobAttempt.objects.create(job=job, number=1, display_name="cp-x-a1", vertex_job_id="77")
    backend.system_metrics["77"] = errors.PermissionDenied("no Google credentials found")
    failed = vcp("jobs", "top", str(job.pk))
    assert failed.exit_code == 3 and "no Google credentials found" in failed.output
    assert vcp("jobs", "top", "999999").exit_code == 1
