"""Vertex AI's resource management (CRUD) requests per minute per region, as the emulator
enforces it (localvertex/quotas/request_rate.py): past the limit a call is refused with
RESOURCE_EXHAUSTED (HTTP 429) and the ErrorInfo Google attaches to a rate quota's refusal, for
its project and region only; predictions and Cloud Logging are not counted."""

from __future__ import annotations

from http import HTTPStatus

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1
from google.cloud.logging_v2.types import ListLogEntriesRequest

from localvertex.__main__ import parse_args
from localvertex.config import Settings
from localvertex.quotas.request_rate import RequestRateQuota, counts, location_of
from tests.localvertex.helpers import PROJECT


def parent(region: str, project: str = PROJECT) -> str:
    return f"projects/{project}/locations/{region}"


def test_calls_past_the_quota_are_refused_per_project_and_region(start_emulator) -> None:
    emu = start_emulator("--crud-quota-per-minute", "3")
    home = parent("us-central1")
    emu.jobs.list_custom_jobs(parent=home)
    emu.jobs.list_hyperparameter_tuning_jobs(parent=home)
    with pytest.raises(exceptions.NotFound):  # answered, so counted
        emu.jobs.get_custom_job(name=f"{home}/customJobs/404")

    with pytest.raises(exceptions.ResourceExhausted) as refused:
        emu.jobs.list_custom_jobs(parent=home)
    assert refused.value.code == HTTPStatus.TOO_MANY_REQUESTS
    assert "Resource management (CRUD) requests per minute per region" in refused.value.message
    assert refused.value.reason == "RATE_LIMIT_EXCEEDED"
    info = next(d for d in refused.value.details if getattr(d, "metadata", None))
    assert dict(info.metadata) == {
        "consumer": f"projects/{PROJECT}",
        "quota_metric": "aiplatform.googleapis.com/resource_management_requests",
        "quota_limit": "ResourceManagementRequestsPerMinutePerProjectPerRegion",
        "quota_limit_value": "3", "quota_location": "us-central1",
        "service": "aiplatform.googleapis.com"}
    with pytest.raises(exceptions.ResourceExhausted):  # every method of the region
        emu.jobs.create_custom_job(parent=home, custom_job=aiplatform_v1.CustomJob())

    # Another region, another project: minutes of their own. Cloud Logging: its own quota.
    emu.jobs.list_custom_jobs(parent=parent("europe-west4"))
    with pytest.raises(exceptions.InvalidArgument, match="read_mask"):
        emu.jobs.list_custom_jobs(request={"parent": parent("europe-west4"),
                                           "read_mask": {"paths": ["name", "nonsense"]}})
    emu.jobs.list_custom_jobs(parent=parent("us-central1", "other-project"))
    emu.logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{PROJECT}"], page_size=1))


def test_what_counts_and_where() -> None:
    assert counts("google.cloud.aiplatform.v1.JobService")
    assert counts("google.cloud.aiplatform.v1beta1.PersistentResourceService")
    assert not counts("google.cloud.aiplatform.v1.PredictionService")
    assert not counts("google.logging.v2.LoggingServiceV2")
    assert location_of(aiplatform_v1.ListCustomJobsRequest.pb()(
        parent="projects/p/locations/asia-east1")) == ("p", "asia-east1")
    assert location_of(aiplatform_v1.GetCustomJobRequest.pb()(
        name="projects/p/locations/us-east1/customJobs/7")) == ("p", "us-east1")
    assert location_of(aiplatform_v1.UndeployModelRequest.pb()(
        endpoint="projects/p/locations/us-west1/endpoints/3")) == ("p", "us-west1")
    assert location_of(aiplatform_v1.GetCustomJobRequest.pb()(name="nonsense")) is None


def test_the_default_is_vertexs_and_a_negative_limit_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert Settings(data_dir=tmp_path).crud_quota_per_minute == 600
    assert parse_args(["--data-dir", "d"]).crud_quota_per_minute == 600
    assert parse_args(["--data-dir", "d", "--crud-quota-per-minute", "0"]
                      ).crud_quota_per_minute == 0
    with pytest.raises(SystemExit):
        parse_args(["--data-dir", "d", "--crud-quota-per-minute", "-5"])
    assert "--crud-quota-per-minute: -5 is negative: give 0 (no limit) or more" in \
        capsys.readouterr().err
    with pytest.raises(ValueError, match="0 \\(none\\) or more, not -1"):
        RequestRateQuota(-1)
