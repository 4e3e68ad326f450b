"""Cloud Monitoring through Google's MetricServiceClient: a running job's replicas each have
their CPU and memory series (sampled from their processes), filtered by metric type and job
as Cloud Monitoring filters them; a filter without one metric type, or an aggregation the
emulator does not compute, is refused."""

from __future__ import annotations

import time

import pytest
from google.api import metric_pb2
from google.api_core import exceptions
from google.cloud import aiplatform_v1, monitoring_v3
from google.cloud.monitoring_v3.services.metric_service.transports import (
    MetricServiceGrpcTransport,
)
from google.protobuf import duration_pb2, timestamp_pb2

from tests.localvertex.helpers import (
    PARENT,
    PROJECT,
    EmulatorProcess,
    custom_job,
    job_id,
    python_pool,
    wait_for,
    wait_state,
)

State = aiplatform_v1.JobState
CPU = "ml.googleapis.com/training/cpu/utilization"
MEMORY = "ml.googleapis.com/training/memory/utilization"
BYTES = "ml.googleapis.com/training/memory/bytes_used"
# Holds 64 MiB resident and keeps a core busy until cancelled.
BUSY = (
    "import time\n"
    "block = bytearray(64 * 2**20)\n"
    "for i in range(0, len(block), 4096): block[i] = 1\n"
    "end = time.time() + 60\n"
    "while time.time() < end: pass\n"
)


def _stamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(int(seconds * 1e9))
    return stamp


def series(client: monitoring_v3.MetricServiceClient, filter_: str, **request: object) -> list:
    now = time.time()
    return list(client.list_time_series(request={
        "name": f"projects/{PROJECT}", "filter": filter_,
        "interval": {"start_time": _stamp(now - 600), "end_time": _stamp(now + 5)},
        **request}))


@pytest.fixture(scope="module")
def metrics(emulator: EmulatorProcess) -> monitoring_v3.MetricServiceClient:
    return monitoring_v3.MetricServiceClient(
        transport=MetricServiceGrpcTransport(channel=emulator.channel()))


def test_a_running_jobs_replicas_have_cpu_and_memory_series(emulator, metrics) -> None:
    job = emulator.jobs.create_custom_job(
        parent=PARENT, custom_job=custom_job("busy", [python_pool(BUSY), python_pool(BUSY)]))
    wanted = job_id(job)
    try:
        wait_state(emulator.jobs, job.name, State.JOB_STATE_RUNNING)
        of_job = f'resource.type = "cloudml_job" AND resource.labels.job_id = "{wanted}"'

        def both_hold_the_block() -> list:
            found = series(metrics, f'metric.type = "{BYTES}" AND {of_job}')
            # A sample taken before the replica touched its 64 MiB is followed by another.
            ready = len(found) == 2 and all(
                s.points[0].value.int64_value >= 64 * 2**20 for s in found)
            return found if ready else []

        held = wait_for(both_hold_the_block, timeout=30, interval=0.2)
        assert sorted(s.resource.labels["task_name"] for s in held) == [
            "workerpool0-0", "workerpool1-0"]
        for s in held:
            assert s.resource.type == "cloudml_job"
            assert s.metric.labels["task_type"] == s.resource.labels["task_name"][:-2]
            assert s.metric.labels["task_index"] == "0"
            assert s.value_type == metric_pb2.MetricDescriptor.INT64
            times = [p.interval.end_time.timestamp() for p in s.points]
            assert times == sorted(times, reverse=True)  # newest first

        cpu = series(metrics, f'metric.type = "{CPU}" AND {of_job}')
        assert len(cpu) == 2
        assert all(0 < s.points[0].value.double_value <= 1.01 for s in cpu)
        one = series(metrics, f'metric.type = "{MEMORY}" AND {of_job} AND '
                              'resource.labels.task_name = "workerpool1-0"')
        assert [s.resource.labels["task_name"] for s in one] == ["workerpool1-0"]
        assert 0 < one[0].points[0].value.double_value < 1

        headers = series(metrics, f'metric.type = "{CPU}" AND {of_job}',
                         view=monitoring_v3.ListTimeSeriesRequest.TimeSeriesView.HEADERS)
        assert len(headers) == 2 and not any(s.points for s in headers)
        assert series(metrics, f'metric.type = "{CPU}" AND resource.labels.job_id = "1"') == []
    finally:
        emulator.jobs.cancel_custom_job(name=job.name)
        wait_state(emulator.jobs, job.name, State.JOB_STATE_CANCELLED)


def test_a_filter_without_one_metric_type_or_an_aggregation_is_refused(metrics) -> None:
    with pytest.raises(exceptions.InvalidArgument, match="exactly one metric type"):
        series(metrics, 'resource.labels.job_id = "1"')
    with pytest.raises(exceptions.InvalidArgument, match="raw points"):
        series(metrics, f'metric.type = "{CPU}"', aggregation={
            "alignment_period": duration_pb2.Duration(seconds=60),
            "per_series_aligner": monitoring_v3.Aggregation.Aligner.ALIGN_MEAN})
