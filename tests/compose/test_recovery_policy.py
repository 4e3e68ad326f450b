"""A recovery policy per job: the API and the form take it, a template keeps it, an export
carries it as labels and an import restores it; bad values are refused by field."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends import base, storage
from controlplane.backends.base import Backend
from controlplane.backends.errors import BackendError
from controlplane.compose import recovery_fields
from controlplane.runs.models import Job
from tests.compose.test_api import post
from tests.compose.test_compose_page import form_data


@pytest.fixture
def vertex_regions(settings: Any) -> Iterator[Backend]:
    """The real Vertex backend (it can be built for any region), pointed at an emulator
    address: nothing here submits, so nothing needs to answer there."""
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:9"
    settings.CP_BACKEND = "controlplane.backends.training.VertexBackend"
    base.get_backend.cache_clear()
    yield base.get_backend()
    base.get_backend.cache_clear()


POLICY = {"strategy": "failover", "max_recoveries": 4, "tries_per_step": 2,
          "tries_per_region": 5, "backoff_s": 2.5, "backoff_cap_s": 60,
          "fallback": ["FLEX_START", "STANDARD"], "regions": ["us-east1"]}


def l4_job(**extra: Any) -> dict[str, Any]:
    return {"name": "l4", "scheduling_strategy": "SPOT",
            "chief": {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4",
                      "accelerator_count": 1}, **extra}


def test_the_api_takes_a_recovery_policy(member_client: Client, vertex_regions: Backend,
                                         django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = post(member_client, "api-job-list", l4_job(recovery=POLICY))
    assert response.status_code == 201, response.content
    job = Job.objects.get()
    assert (job.recovery_strategy, job.max_recoveries) == ("failover", 4)
    assert job.recovery_options["fallback"] == ["FLEX_START", "STANDARD"]
    assert job.recovery_options["regions"] == ["us-east1"]
    assert (job.recovery_options["tries_per_step"], job.recovery_options["tries_per_region"],
            job.recovery_options["backoff_s"], job.recovery_options["backoff_cap_s"]) == \
        (2, 5, 2.5, 60)


def test_bad_recovery_values_are_refused_by_field(member_client: Client,
                                                  vertex_regions: Backend) -> None:
    cases = [
        ({"strategy": "pray"}, "recovery", "strategy"),
        ({"fallback": ["CHEAP"]}, "recovery", "fallback"),
        ({"max_recoveries": 99}, "recovery", "max_recoveries"),
        ({"regions": ["mars-north1"]}, "recovery", "regions"),
        ({"color": "red"}, "recovery", "color"),
        ({"tries_per_step": 0}, "recovery", "tries_per_step"),
        ({"tries_per_region": 51}, "recovery", "tries_per_region"),
        ({"backoff_s": -1}, "recovery", "backoff_s"),
        ({"backoff_cap_s": "soon"}, "recovery", "backoff_cap_s"),
        ({"backoff_s": True}, "recovery", "backoff_s"),
        ({"backoff_s": 30, "backoff_cap_s": 20}, "recovery", "backoff_cap_s"),
    ]
    for policy, key, sub in cases:  # errors nested as the request is
        response = post(member_client, "api-job-list", l4_job(recovery=policy))
        assert response.status_code == 400, (policy, response.content)
        errors = response.json()
        assert errors[key][sub], (policy, errors)
    ranges = {"tries_per_step": "from 1 to 10", "tries_per_region": "from 0 to 50",
              "backoff_s": "seconds from 0 to 3600", "backoff_cap_s": "seconds from 0 to 86400"}
    for field, words in ranges.items():
        bad = post(member_client, "api-job-list", l4_job(recovery={field: -5})).json()
        assert words in bad["recovery"][field][0], bad
    assert not Job.objects.exists()
    mars = post(member_client, "api-job-validate", l4_job(recovery={"regions": ["mars-north1"]}))
    assert "not a Vertex training region" in mars.json()["errors"]["recovery.regions"][0]


def test_a_backend_bound_to_one_region_refuses_failover_regions(member_client: Client,
                                                                backend: Backend) -> None:
    response = post(member_client, "api-job-validate", l4_job(recovery=POLICY))
    assert "submits to us-central1 only" in response.json()["errors"]["recovery.regions"][0]


def test_export_carries_the_policy_as_labels_and_import_restores_it(
        member_client: Client, vertex_regions: Backend) -> None:
    # gcloud YAML: on the command line it documents (--labels=...).
    gcloud = post(member_client, "api-job-export", l4_job(recovery=POLICY), "?fmt=yaml")
    assert gcloud.status_code == 200, gcloud.content
    assert "--labels=cp-recovery-strategy=failover" in gcloud.content.decode()
    # REST JSON: in the CustomJob's labels; importing it restores the policy.
    rest = post(member_client, "api-job-export", l4_job(recovery=POLICY), "?fmt=json")
    document = json.loads(rest.content)
    assert document["labels"]["cp-recovery-fallback"] == "flex-start_standard"
    assert (document["labels"]["cp-recovery-step-tries"],
            document["labels"]["cp-recovery-backoff-ms"]) == ("2", "2500")
    imported = post(member_client, "api-job-import", document).json()
    assert imported["request"]["recovery"] == POLICY, imported
    assert "cp-recovery-strategy" not in (imported["request"].get("labels") or {})


def test_label_round_trip() -> None:
    labels = recovery_fields.to_labels(POLICY)
    assert all(len(v) <= 63 and re.fullmatch(r"[a-z0-9_-]*", v) for v in labels.values())
    assert labels["cp-recovery-backoff-cap-ms"] == "60000"
    policy, rest = recovery_fields.from_labels({**labels, "team": "x"})
    assert policy == POLICY and rest == {"team": "x"}


def test_a_bad_label_is_an_error_on_its_field_not_a_silent_default(
        member_client: Client, vertex_regions: Backend) -> None:
    document = json.loads(post(member_client, "api-job-export", l4_job(recovery=POLICY),
                               "?fmt=json").content)
    document["labels"]["cp-recovery-step-tries"] = "lots"
    document["labels"]["cp-recovery-backoff-ms"] = "99999999"
    imported = post(member_client, "api-job-import", document).json()
    assert not imported["valid"]
    assert "from 1 to 10" in imported["errors"]["recovery.tries_per_step"][0]
    assert "from 0 to 3600" in imported["errors"]["recovery.backoff_s"][0]


def test_the_form_takes_it_and_a_clone_shows_it(client: Client, member: Any,
                                               vertex_regions: Backend,
                                               django_capture_on_commit_callbacks: Any) -> None:
    client.force_login(member)
    data = form_data(chief_machine_type="g2-standard-8", chief_accelerator_type="NVIDIA_L4",
                     chief_accelerator_count="1", workers_replica_count="0",
                     scheduling_strategy="SPOT", recovery_strategy="failover",
                     recovery_max_recoveries="4", recovery_fallback="FLEX_START, STANDARD",
                     recovery_regions="us-east1", recovery_tries_per_step="2",
                     recovery_tries_per_region="5", recovery_backoff_s="2.5",
                     recovery_backoff_cap_s="60")
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(reverse("job-compose"), data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    job = Job.objects.get()
    assert job.request["recovery"] == POLICY and job.max_recoveries == 4
    page = client.get(reverse("job-compose") + f"?clone={job.pk}").content.decode()
    assert 'value="FLEX_START, STANDARD"' in page and 'value="us-east1"' in page
    assert 'name="recovery_backoff_s"' in page and 'value="2.5"' in page
    bad = client.post(reverse("job-validate"), {**data, "recovery_regions": "mars-north1"})
    assert "not a Vertex training region" in bad.content.decode()
    for field, value, words in (("recovery_tries_per_step", "0", "from 1 to 10"),
                                ("recovery_backoff_s", "-1", "seconds from 0 to 3600"),
                                ("recovery_backoff_cap_s", "1", "at least backoff_s")):
        bad = client.post(reverse("job-validate"), {**data, field: value})
        assert words in bad.content.decode(), field


def test_a_template_keeps_the_policy(team_admin_client: Client, vertex_regions: Backend) -> None:
    saved = post(team_admin_client, "api-template-list",
                 {"name": "spot-l4", "request": l4_job(recovery=POLICY)})
    assert saved.status_code == 201, saved.content
    assert saved.json()["request"]["recovery"] == POLICY
    # From a CustomJob export: the labels become the policy.
    exported = json.loads(post(team_admin_client, "api-job-export", l4_job(recovery=POLICY),
                               "?fmt=json").content)
    from_labels = post(team_admin_client, "api-template-list",
                       {"name": "spot-l4-json", "request": exported})
    assert from_labels.json()["request"]["recovery"] == POLICY
    page = team_admin_client.get(reverse("job-compose") + f"?template={saved.json()['id']}")
    assert 'value="us-east1"' in page.content.decode()


# --- the checkpoint bucket must be readable from the failover regions --------------------------

class _BucketsHandler(BaseHTTPRequestHandler):
    """Cloud Storage's JSON API for buckets.get, as a storage emulator answers it."""

    def do_GET(self) -> None:
        name = urlsplit(self.path).path.removeprefix("/storage/v1/b/").strip("/")
        self.server.asked.append(name)  # type: ignore[attr-defined]
        found = self.server.buckets.get(name)  # type: ignore[attr-defined]
        if found is None:
            status, body = 404, {"error": {"code": 404, "message": "bucket does not exist"}}
        else:
            status, body = 200, {"kind": "storage#bucket", "name": name, "id": name,
                                 "locationType": found[0], "location": found[1]}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def buckets(settings: Any) -> Iterator[ThreadingHTTPServer]:
    """A storage emulator holding a regional, a dual-region and a multi-region bucket, named
    by STORAGE_EMULATOR_HOST: the check asks it even beside the Vertex emulator."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BucketsHandler)
    server.buckets = {  # type: ignore[attr-defined]
        "regional": ("region", "US-CENTRAL1"), "dual": ("dual-region", "NAM4"),
        "multi": ("multi-region", "US")}
    server.asked = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.STORAGE_EMULATOR_HOST = f"http://127.0.0.1:{server.server_address[1]}"
    settings.CP_LOCAL_GCS_ROOT = ""
    yield server
    server.shutdown()
    server.server_close()


def test_bucket_location_reads_the_bucket(buckets: ThreadingHTTPServer) -> None:
    assert storage.bucket_location("gs://regional/jobs") == ("region", "us-central1")
    assert storage.bucket_location("gs://dual/jobs/x") == ("dual-region", "nam4")
    assert buckets.asked == ["regional", "dual"]  # type: ignore[attr-defined]
    with pytest.raises(BackendError, match="cannot read bucket gone"):
        storage.bucket_location("gs://gone/jobs")


def test_local_storage_is_not_asked(settings: Any, buckets: ThreadingHTTPServer) -> None:
    assert storage.bucket_location("/var/checkpoints") is None
    settings.STORAGE_EMULATOR_HOST = ""
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:9"  # its buckets are folders every region reads
    assert storage.bucket_location("gs://regional/jobs") is None
    settings.VERTEX_EMULATOR_ADDR = ""
    settings.CP_LOCAL_GCS_ROOT = "/tmp/gcs"
    assert storage.bucket_location("gs://regional/jobs") is None
    assert buckets.asked == []  # type: ignore[attr-defined]


def _regions_errors(client: Client, bucket: str, regions: list[str]) -> list[str]:
    body = l4_job(recovery={**POLICY, "regions": regions},
                  base_output_directory=f"gs://{bucket}/jobs")
    return post(client, "api-job-validate", body).json()["errors"].get("recovery.regions", [])


def test_a_regional_bucket_is_refused_for_failover_to_another_region(
        member_client: Client, vertex_regions: Backend, buckets: ThreadingHTTPServer) -> None:
    (problem,) = _regions_errors(member_client, "regional", ["us-east1"])
    assert "a region bucket in us-central1" in problem and "us-east1" in problem
    assert "multi-region or dual-region" in problem
    # Its own region only: nothing moves, nothing to check.
    assert _regions_errors(member_client, "regional", ["us-central1"]) == []
    assert buckets.asked == ["regional"]  # type: ignore[attr-defined]
    refused = post(member_client, "api-job-list", l4_job(
        recovery=POLICY, base_output_directory="gs://regional/jobs"))
    assert refused.status_code == 400 and refused.json()["recovery"]["regions"]
    assert not Job.objects.exists()


@pytest.mark.parametrize("bucket", ["dual", "multi"])
def test_a_dual_or_multi_region_bucket_is_accepted(member_client: Client,
                                                   vertex_regions: Backend,
                                                   buckets: ThreadingHTTPServer,
                                                   bucket: str) -> None:
    assert _regions_errors(member_client, bucket, ["us-east1", "europe-west4"]) == []
    assert buckets.asked == [bucket]  # type: ignore[attr-defined]


def test_a_bucket_that_cannot_be_read_is_refused_with_the_reason(
        member_client: Client, vertex_regions: Backend, buckets: ThreadingHTTPServer) -> None:
    (problem,) = _regions_errors(member_client, "gone", ["us-east1"])
    assert "cannot check where gs://gone/jobs is kept" in problem
