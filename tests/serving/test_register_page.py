"""Registering a model from the pages: the job page's form and the serving page's form post
the same view, which must accept the job it names (the menu lists only the newest jobs, and a
job older than the menu is registered from its own page) and offer every runtime."""

from __future__ import annotations

from typing import Any

from django.contrib.messages import get_messages
from django.test import Client

from controlplane.backends.images_base import get_image_registry
from controlplane.runs.models import Job
from controlplane.serving import forms
from controlplane.serving.models import ModelEntry
from tests.serving.fakes import FakeServing


def _signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_checkpoint_is_registered_from_the_job_page(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    client = _signed_in(member)
    page = client.get(f"/serving/jobs/{trained_job.pk}/panel/")
    assert page.status_code == 200
    text = page.content.decode()
    # Every runtime the model registry knows is on the menu, triton and tensorrt included.
    for value, _label in ModelEntry.Runtime.choices:
        assert f'<option value="{value}">' in text, value
    response = client.post("/serving/models/new/", {
        "job": trained_job.pk, "step": "60", "runtime": "compiled",
        "next": f"/jobs/{trained_job.pk}/"})
    assert response.status_code == 302 and response.url == f"/jobs/{trained_job.pk}/"
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert said and said[0].startswith("Model "), said
    entry = ModelEntry.objects.get()
    assert (entry.job_id, entry.step, entry.runtime) == (trained_job.pk, 60, "compiled")


def test_the_job_pages_form_registers_a_triton_model_with_the_teams_image(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    """triton and tensorrt serve Triton's image from the team's own registry: the job page's
    form has the image field they need (without it, they were always refused there)."""
    client = _signed_in(member)
    text = client.get(f"/serving/jobs/{trained_job.pk}/panel/").content.decode()
    assert 'name="image_uri"' in text
    response = client.post("/serving/models/new/", {
        "job": trained_job.pk, "step": "60", "runtime": "triton", "image_uri": "",
        "next": f"/jobs/{trained_job.pk}/"})
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert "push nvcr.io/nvidia/tritonserver" in said[0], said
    copy = "us-docker.pkg.dev/acme/serving/tritonserver:24.10-py3"
    get_image_registry().push(copy)
    client.post("/serving/models/new/", {
        "job": trained_job.pk, "step": "60", "runtime": "triton", "image_uri": copy,
        "next": f"/jobs/{trained_job.pk}/"})
    entry = ModelEntry.objects.get()
    assert (entry.runtime, entry.image_uri, entry.state) == ("triton", copy, "PACKAGING")


def test_a_job_older_than_the_menu_is_still_accepted(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    for n in range(forms.MENU_JOBS):
        Job.objects.create(team=trained_job.team, created_by=member, name=f"newer-{n}",
                           request=trained_job.request, custom_job=trained_job.custom_job,
                           project="p", region="us-central1")
    form = forms.RegisterForm(user=member)
    # (The first choice is none: a Hugging Face model folder is registered without a job.)
    menu = [value for value, _ in form.fields["job"].choices if value != ""]
    assert len(menu) == forms.MENU_JOBS and trained_job.pk not in {v.value for v in menu}
    posted = forms.RegisterForm({"job": trained_job.pk, "step": "60"}, user=member)
    assert posted.is_valid(), posted.errors
    assert posted.cleaned_data["job"] == trained_job


def test_a_job_of_another_team_is_refused_on_its_field(
        fake: FakeServing, queued: list, trained_job: Job, outsider: Any) -> None:
    posted = forms.RegisterForm({"job": trained_job.pk, "step": "60"}, user=outsider)
    assert not posted.is_valid()
    assert list(posted.errors) == ["job"]
    assert ModelEntry.objects.count() == 0
