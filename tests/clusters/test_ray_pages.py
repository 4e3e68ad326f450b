"""The cluster page and a Ray job's own job page as a person reads them: the Ray job's attempt
is its Ray submission (never a CustomJob), the output is readable wrapped text, the dashboard
is a link only when its address is an http(s) one, and a Ray job is submitted from the page by
the service the API uses, with bad input shown on the form's fields."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from controlplane.clusters import lifecycle
from controlplane.clusters.models import Cluster, RayJob
from controlplane.runs.models import JobState, RestartCause
from tests.clusters.test_api import running

pytestmark = pytest.mark.django_db
TASK = "controlplane.clusters.tasks.advance_ray_job"
WORKER = "(RayTrainWorker pid=7377, ip=127.0.0.1) "


def page(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def between(html: str, start: str, end: str) -> str:
    """The part of HTML from START to the first END after it."""
    at = html.index(start)
    return html[at:html.index(end, at)]


def event(**fields: Any) -> str:
    return WORKER + json.dumps({"severity": "INFO", **fields}, separators=(",", ":"))


def run_to_the_end(member: Any, ray: Any, output: str) -> tuple[Cluster, RayJob]:
    cluster = running(member)
    ray_job = lifecycle.submit_ray_job(cluster=cluster, user=member,
                                       entrypoint=["python", "-m", "trainers.ray_train"])
    ray.output = output
    lifecycle.advance_ray_job(ray_job.pk)
    ray.status = "SUCCEEDED"
    lifecycle.advance_ray_job(ray_job.pk)
    ray_job.refresh_from_db()
    return cluster, ray_job


def restarted(job: Any) -> None:
    job.restart_records.create(attempt=1, replica="workerpool0-1", ordinal=1,
                               cause=RestartCause.CRASH, occurred_at=job.created_at)


# --- a. the Ray job's own job page ------------------------------------------------------------

def test_a_succeeded_ray_jobs_page_names_its_ray_submission_not_a_customjob(
        member, queued, ray) -> None:
    _, ray_job = run_to_the_end(member, ray, event(
        event="run_finished", message="finished", step=2, final_loss=2.5, wall_s=1.0) + "\n")
    job = ray_job.job
    # Ray Train started a worker over: a restart, so the header shows the attempts table.
    restarted(job)
    assert job.state == JobState.SUCCEEDED
    attempts = between(page(member).get(f"/jobs/{job.pk}/").content.decode(),
                       'id="job-attempts"', "</section>")
    assert "not yet submitted" not in attempts and "CustomJob" not in attempts
    assert "<th>Ray submission</th>" in attempts
    row = between(attempts, "<tbody>", "</tr>")
    assert ray_job.submission_id in row and "SUCCEEDED" in row


def test_a_ray_job_not_yet_sent_to_ray_says_so(member, queued) -> None:
    cluster = running(member)
    ray_job = lifecycle.submit_ray_job(cluster=cluster, user=member, entrypoint=["python"])
    job = ray_job.job
    restarted(job)
    attempts = between(page(member).get(f"/jobs/{job.pk}/").content.decode(),
                       'id="job-attempts"', "</section>")
    assert "not yet submitted to Ray" in attempts and "CustomJob" not in attempts


# --- b. its output on the cluster page --------------------------------------------------------

def test_the_output_is_wrapped_text_without_escapes_or_json(member, queued, ray) -> None:
    long_line = "x" * 5000
    raw = "\n".join([
        "\x1b[36mStarting the run\x1b[0m",
        "\x1b[2m" + event(event="step", message="step 1/2 loss 3.5000", step=1, total_steps=2,
                          loss=3.5) + "\x1b[0m",
        WORKER + "NCCL <ready> & waiting",
        long_line,
    ]) + "\n"
    cluster, ray_job = run_to_the_end(member, ray, raw)
    assert ray_job.logs == raw  # stored as Ray gave it
    html = page(member).get(f"/clusters/{cluster.pk}/").content.decode()
    output = between(html, '<pre class="log-panel log-line" id="ray-output">', "</pre>")
    lines = output.split(">", 1)[1].splitlines()
    assert lines == ["Starting the run", WORKER + "step 1/2 loss 3.5000",
                     WORKER + "NCCL &lt;ready&gt; &amp; waiting", long_line]
    assert "\x1b" not in html and "[36m" not in html and '"event"' not in output


def test_a_long_output_shows_its_newest_lines_and_says_where_the_rest_is(
        member, queued, ray) -> None:
    cluster, ray_job = run_to_the_end(
        member, ray, "".join(f"line {n}\n" for n in range(1, 1201)))
    html = page(member).get(f"/clusters/{cluster.pk}/").content.decode()
    output = between(html, 'id="ray-output">', "</pre>")
    assert output.split(">", 1)[1].splitlines()[0] == "line 701" and "line 1200" in output
    assert "The last 500 of 1200 lines" in html
    assert f'href="/jobs/{ray_job.job_id}/">its job page' in html


# --- c. the dashboard -------------------------------------------------------------------------

def test_the_dashboard_is_a_link(member, queued, settings) -> None:
    cluster = running(member)
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:50051"  # its dashboard: plain HTTP on loopback
    html = page(member).get(f"/clusters/{cluster.pk}/").content.decode()
    assert re.search(r'<a href="http://127\.0\.0\.1:8265" id="ray-dashboard"[^>]*'
                     r'rel="noopener noreferrer">http://127\.0\.0\.1:8265</a>', html)
    # On Vertex: a host without a scheme, served over TLS.
    host = "abc123-dot-us-central1.aiplatform-training.googleusercontent.com"
    Cluster.objects.filter(pk=cluster.pk).update(dashboard_uri=host)
    settings.VERTEX_EMULATOR_ADDR = ""
    html = page(member).get(f"/clusters/{cluster.pk}/").content.decode()
    assert f'<a href="https://{host}" id="ray-dashboard"' in html


@pytest.mark.parametrize("address", [
    'javascript:alert(1)',
    '"><script>alert(1)</script>',
    "data:text/html,<script>alert(1)</script>",
    "http://a@evil.example/",
])
def test_a_dashboard_address_that_is_not_http_is_text(member, queued, address) -> None:
    cluster = running(member)
    Cluster.objects.filter(pk=cluster.pk).update(dashboard_uri=address)
    html = page(member).get(f"/clusters/{cluster.pk}/").content.decode()
    assert 'id="ray-dashboard"' not in html and "<script>alert" not in html
    assert 'href="javascript' not in html and 'href="data:' not in html
    assert "evil.example" not in between(html, "<h2>Cost</h2>", "</section>").split(
        "<code>")[0]  # shown as text only, never as a link


# --- d. submitting a Ray job from the page ----------------------------------------------------

def form(key: str = "k" * 32, **fields: str) -> dict[str, str]:
    return {"ray-idempotency_key": key,
            "ray-entrypoint": "python -m trainers.ray_train --workers 2 -- --preset tiny",
            **{f"ray-{name}": value for name, value in fields.items()}}


def test_a_member_submits_a_ray_job_from_the_cluster_page(member, queued) -> None:
    cluster = running(member)
    html = page(member).get(f"/clusters/{cluster.pk}/").content.decode()
    assert 'id="ray-job-form"' in html and "POST /api/v1" not in html
    response = page(member).post(
        f"/clusters/{cluster.pk}/ray-jobs/",
        form(entrypoint="python -c 'print(\"a; b\")'", env_vars="MODE=fast\n\nSEED = 7",
             entrypoint_num_cpus="0.5"))
    assert response.status_code == 302 and response["Location"] == f"/clusters/{cluster.pk}/"
    ray_job = RayJob.objects.get()
    # The words as a shell splits them, and nothing that a shell would do with them.
    assert ray_job.entrypoint == ["python", "-c", 'print("a; b")']
    assert ray_job.env_vars == {"MODE": "fast", "SEED": "7"}
    assert ray_job.entrypoint_num_cpus == 0.5
    assert ray_job.job is not None and ray_job.created_by == member
    assert queued[-1] == (TASK, (str(ray_job.pk),))
    # The same page sent again (a second click) submits nothing more.
    again = page(member).post(
        f"/clusters/{cluster.pk}/ray-jobs/",
        form(entrypoint="python -c 'print(\"a; b\")'", env_vars="MODE=fast\n\nSEED = 7",
             entrypoint_num_cpus="0.5"))
    assert again.status_code == 302 and RayJob.objects.count() == 1


@pytest.mark.parametrize("fields,field,message", [
    ({"entrypoint": "python -c 'print(1)"}, "entrypoint", "cannot split it into arguments"),
    ({"entrypoint": "   "}, "entrypoint", "This field is required"),
    ({"entrypoint": "python ''"}, "entrypoint", "it is run without a shell"),
    ({"entrypoint": " ".join(["a"] * 65)}, "entrypoint", "1 to 64 arguments"),
    ({"env_vars": "MODE"}, "env_vars", "line 1: write NAME=value"),
    ({"env_vars": "lower=1"}, "env_vars", "names are upper-case"),
    ({"entrypoint_num_cpus": "-1"}, "entrypoint_num_cpus", "greater than or equal to 0"),
])
def test_bad_input_is_shown_on_its_field_and_submits_nothing(member, queued, fields, field,
                                                             message) -> None:
    cluster = running(member)
    before = len(queued)
    response = page(member).post(f"/clusters/{cluster.pk}/ray-jobs/", form(**fields))
    assert response.status_code == 400
    html = response.content.decode()
    errors = between(html, f'id="errors-ray-{field}"', "</ul>")
    assert message in errors
    assert not RayJob.objects.exists() and len(queued) == before
    # The form keeps what was typed, to be corrected.
    if field == "entrypoint" and fields[field].strip():
        assert 'value="' + fields[field].replace("'", "&#x27;") in html


def test_a_cluster_that_is_not_running_says_why_on_the_form(member, queued) -> None:
    cluster = running(member)
    lifecycle.request_delete(cluster)  # DELETING: it still bills, but runs nothing new
    response = page(member).post(f"/clusters/{cluster.pk}/ray-jobs/", form())
    assert response.status_code == 400
    assert "Ray jobs run on a RUNNING cluster" in between(
        response.content.decode(), 'id="ray-job-errors"', "</ul>")
    assert not RayJob.objects.exists()


def test_only_who_may_change_the_cluster_sees_and_uses_the_form(member, viewer, outsider,
                                                                 queued) -> None:
    cluster = running(member)
    assert 'id="ray-job-form"' not in page(viewer).get(f"/clusters/{cluster.pk}/").content.decode()
    assert page(viewer).post(f"/clusters/{cluster.pk}/ray-jobs/", form()).status_code == 403
    assert page(outsider).post(f"/clusters/{cluster.pk}/ray-jobs/", form()).status_code == 404
    assert not RayJob.objects.exists()
