"""The job page names checkpoints by the gs:// URI they are, not by the folder the trainer
printed: the emulator's local stand-in for a bucket and the Cloud Storage FUSE mount become
gs://bucket/key in the checkpoint list, the timeline, the restarts' "resumed from" and a
resubmission's header; other paths stay as written."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.runs.models import Job, JobEvent, JobRestart, JobState
from controlplane.runs.uris import storage_uri
from controlplane.teams.models import Team

ROOT = "/var/x/gcs"


@pytest.fixture(autouse=True)
def emulated_buckets(settings: Any) -> None:
    settings.CP_LOCAL_STORAGE_ROOT = ROOT


@pytest.mark.parametrize(("printed", "shown"), [
    (f"{ROOT}/cp-local-bucket/jobs/vision/job-1/checkpoints/step-00000030",
     "gs://cp-local-bucket/jobs/vision/job-1/checkpoints/step-00000030"),
    ("/gcs/my-bucket/ckpt/step-5", "gs://my-bucket/ckpt/step-5"),
    ("gs://b/already", "gs://b/already"),
    ("/tmp/ckpt/step-5", "/tmp/ckpt/step-5"),                # a replica's own disk
    (f"{ROOT}/b/../../etc/passwd", f"{ROOT}/b/../../etc/passwd"),  # not what it seems
    (f"{ROOT}x/b/k", f"{ROOT}x/b/k"),                        # beside the root, not in it
    ("", ""),
])
def test_a_path_is_shown_as_the_uri_it_names(printed: str, shown: str) -> None:
    assert storage_uri(printed) == shown


def visible(page: str) -> str:
    """The page's text as read, without attributes (titles keep the printed path)."""
    return re.sub(r"<[^>]+>", " ", page)


def test_the_job_page_names_checkpoints_by_their_gs_uri(
        member_client: Client, member: Any, team: Team, make_job: Callable[..., Job]) -> None:
    old = make_job(team, member, name="first", state=JobState.SUCCEEDED)
    folder = f"{ROOT}/cp-local-bucket/jobs/vision/job-{old.pk}/checkpoints"
    job = make_job(team, member, name="second", state=JobState.RUNNING, resubmitted_from=old,
                   resume_from=f"{folder}/step-00000020", resume_from_step=20)
    t0 = timezone.now() - timedelta(minutes=5)
    saved = JobEvent.objects.create(job=job, kind="checkpoint_saved", step=30, timestamp=t0,
                                    data={"step": 30, "path": f"{folder}/step-00000030"})
    JobEvent.objects.create(job=job, kind="preempted", timestamp=t0 + timedelta(seconds=5),
                            data={"signal": "SIGTERM", "step": 31,
                                  "checkpoint_path": f"{folder}/step-00000031"})
    JobEvent.objects.create(job=job, kind="resumed", step=30,
                            timestamp=t0 + timedelta(seconds=9),
                            data={"step": 30, "path": f"{folder}/step-00000030"})
    JobRestart.objects.create(job=job, attempt=1, replica="workerpool0-0", ordinal=1,
                              cause="preemption", occurred_at=t0 + timedelta(seconds=5),
                              resumed_at=t0 + timedelta(seconds=9), resumed_from_step=30,
                              resumed_from_path=f"{folder}/step-00000030", checkpoint=saved)
    page = member_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    text = visible(page)
    uri = f"gs://cp-local-bucket/jobs/vision/job-{old.pk}/checkpoints"
    assert ROOT not in text
    # The checkpoint list, the timeline (saved, preempted, resumed), the restarts' resumed-from
    # and the resubmission's header.
    assert f'<td class="mono small path">{uri}/step-00000030</td>' in page
    assert text.count(f"{uri}/step-00000030") >= 4
    assert f"{uri}/step-00000031" in text
    assert f"{uri}/step-00000020" in text
