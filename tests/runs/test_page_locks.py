"""A reconcile page's transactions (its moved jobs recorded, its costs written) lock the page's
job rows FOR NO KEY UPDATE: workers changing a job still wait for each other, but the log
store, writing the same jobs' lines and timeline events meanwhile, does not wait for the page
(a foreign key's check takes FOR KEY SHARE, which FOR UPDATE would block). Holding the page's
locks and taking the store's in another order is also how the two could deadlock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, connections, transaction
from django.utils import timezone

from controlplane.backends.base import RemoteJob
from controlplane.costs import spend
from controlplane.runs import reconcile
from controlplane.runs.models import Job, JobAttempt, JobEvent, JobState

pytestmark = pytest.mark.django_db(transaction=True)


def _elsewhere(write: Callable[[], None]) -> BaseException | None:
    """Run WRITE on another connection, as another process would, giving up on any lock it
    would wait for more than half a second (lock_timeout counts only the wait); its error, or
    None."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '500ms'")
                write()
        except BaseException as exc:
            failures.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    return failures[0] if failures else None


def _line_of(job: Job) -> Callable[[], None]:
    return lambda: JobEvent.objects.create(job_id=job.pk, attempt=1, kind="note",
                                           timestamp=timezone.now(), data={})


def _a_change_of(job: Job) -> Callable[[], None]:
    return lambda: Job.objects.select_for_update().get(pk=job.pk)


def test_a_page_writing_costs_holds_up_other_changes_of_its_jobs_not_their_lines(
        make_job: Callable[..., Job]) -> None:
    job = make_job()
    with transaction.atomic():
        spend.refresh_together([job.pk])  # its locks held until this block ends
        assert _elsewhere(_line_of(job)) is None
        assert isinstance(_elsewhere(_a_change_of(job)), OperationalError)


def test_a_page_recording_moves_holds_up_other_changes_of_its_jobs_not_their_lines(
        make_job: Callable[..., Job]) -> None:
    job = make_job()
    name = f"projects/p/locations/us-central1/customJobs/{job.pk}0001"
    JobAttempt.objects.filter(job=job, number=job.attempt).update(
        vertex_name=name, vertex_job_id=f"{job.pk}0001", vertex_state="JOB_STATE_PENDING")
    Job.objects.filter(pk=job.pk).update(state=JobState.PENDING)
    started = timezone.now() - timedelta(seconds=5)
    with transaction.atomic():
        recorded = reconcile._record_moves({job.pk: RemoteJob(
            name=name, display_name="x", state="JOB_STATE_RUNNING", start_time=started)})
        assert recorded == [job.pk]
        assert _elsewhere(_line_of(job)) is None
        assert isinstance(_elsewhere(_a_change_of(job)), OperationalError)
    assert Job.objects.get(pk=job.pk).state == JobState.RUNNING
