"""Quotas and stockouts per region, through Google's own clients: CreateCustomJob refused with
RESOURCE_EXHAUSTED past an accelerator quota (the numbers in an ErrorInfo), the Cloud Quotas
API reporting the limits, and a stockout injected in one region only."""

from __future__ import annotations

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1
from google.cloud.cloudquotas_v1 import CloudQuotasClient
from google.cloud.cloudquotas_v1.services.cloud_quotas.transports import CloudQuotasGrpcTransport

from localvertex.client import job_client
from tests.localvertex.helpers import PROJECT, custom_job, python_pool, wait_state

# Left out of `make test-fast` (the inner loop): jobs queued and run in the emulator.
pytestmark = pytest.mark.slow

State = aiplatform_v1.JobState
T4 = "aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus"
T4_SPOT = "aiplatform.googleapis.com/custom_model_training_preemptible_nvidia_t4_gpus"
QUOTAS_PARENT = f"projects/{PROJECT}/locations/global/services/aiplatform.googleapis.com"


def gpu_job(name: str, gpus: int, *, spot: bool = False, seconds: float = 30) -> object:
    pool = python_pool(f"import time; time.sleep({seconds})")
    pool["machine_spec"] = {"machine_type": "n1-standard-8",
                            "accelerator_type": "NVIDIA_TESLA_T4", "accelerator_count": gpus}
    scheduling = {"scheduling": {"strategy": "SPOT"}} if spot else {}
    return custom_job(name, [pool], **scheduling)


def parent(region: str) -> str:
    return f"projects/{PROJECT}/locations/{region}"


def test_quota_is_enforced_per_region_and_for_spot_apart(start_emulator) -> None:
    emu = start_emulator("--quota", "custom_model_training_nvidia_t4_gpus@us-central1=4")
    jobs = job_client(emu.address, emu.token)
    first = jobs.create_custom_job(parent=parent("us-central1"), custom_job=gpu_job("a", 4))
    with pytest.raises(exceptions.ResourceExhausted) as refused:
        jobs.create_custom_job(parent=parent("us-central1"), custom_job=gpu_job("b", 1))
    assert T4 in refused.value.message and "limit 4, in use 4, requested 1" in \
        refused.value.message
    (info,) = [d for d in refused.value.details if hasattr(d, "metadata")]
    assert dict(info.metadata).items() >= {"quota_metric": T4, "region": "us-central1",
                                           "limit": "4", "usage": "4", "requested": "1"}.items()
    # Another region, and the preemptible quota, are not this limit.
    jobs.create_custom_job(parent=parent("europe-west4"), custom_job=gpu_job("c", 8))
    jobs.create_custom_job(parent=parent("us-central1"), custom_job=gpu_job("d", 2, spot=True))
    # Raised through the admin service: the same request now passes.
    jobs.cancel_custom_job(name=first.name)
    wait_state(jobs, first.name, State.JOB_STATE_CANCELLED)
    with emu.admin() as admin:
        admin.set_quota("custom_model_training_nvidia_t4_gpus", 1, region="us-central1")
    jobs.create_custom_job(parent=parent("us-central1"), custom_job=gpu_job("e", 1))


def test_the_cloud_quotas_api_reports_the_limits(start_emulator) -> None:
    emu = start_emulator("--quota", "custom_model_training_nvidia_t4_gpus@us-central1=4",
                         "--quota", "custom_model_training_preemptible_nvidia_t4_gpus=16")
    channel = emu.channel()
    client = CloudQuotasClient(transport=CloudQuotasGrpcTransport(channel=channel))
    infos = {i.metric: i for i in client.list_quota_infos(parent=QUOTAS_PARENT)}
    on_demand = {tuple(d.dimensions.items()): d.details.value
                 for d in infos[T4].dimensions_infos}
    assert on_demand == {(("region", "us-central1"),): 4, (): -1}
    spot = client.get_quota_info(name=infos[T4_SPOT].name)
    assert [d.details.value for d in spot.dimensions_infos] == [16]
    assert spot.dimensions == ["region"] and spot.service == "aiplatform.googleapis.com"
    with pytest.raises(exceptions.NotFound):
        client.get_quota_info(name=f"{QUOTAS_PARENT}/quotaInfos/NoSuchQuota")
    channel.close()


def test_a_stockout_injected_in_one_region(start_emulator) -> None:
    emu = start_emulator()
    jobs = job_client(emu.address, emu.token)
    with emu.admin() as admin:
        admin.stockout("us-central1", count=1, scheduling="SPOT")
    here = jobs.create_custom_job(parent=parent("us-central1"),
                                  custom_job=gpu_job("s", 1, spot=True, seconds=0))
    there = jobs.create_custom_job(parent=parent("us-east1"),
                                   custom_job=gpu_job("t", 1, spot=True, seconds=0))
    failed = wait_state(jobs, here.name, State.JOB_STATE_FAILED)
    assert failed.error.code == 8 and "STOCKOUT" in failed.error.message
    assert "us-central1" in failed.error.message
    wait_state(jobs, there.name, State.JOB_STATE_SUCCEEDED)
    # Used once: the next spot job in the region runs.
    again = jobs.create_custom_job(parent=parent("us-central1"),
                                   custom_job=gpu_job("u", 1, spot=True, seconds=0))
    wait_state(jobs, again.name, State.JOB_STATE_SUCCEEDED)
