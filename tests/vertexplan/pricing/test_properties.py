"""Properties over random jobs: a total is the sum of its line items, and scales exactly."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vertexplan.pricing.factories import REDUCTION_SERVER, job, pool
from vertexplan.pricing import Totals
from vertexplan.pricing.job_estimate import for_duration, hourly
from vertexplan.pricing.snapshot import restore, snapshot

REGIONS = ("us-central1", "europe-west4", "asia-southeast1")
DISK_TYPES = ("pd-ssd", "pd-standard")
disk_specs = st.tuples(st.sampled_from(DISK_TYPES), st.integers(100, 64_000))


@st.composite
def jobs(draw):
    accelerator = draw(
        st.sampled_from(
            [
                ("n1-standard-8", "NVIDIA_TESLA_T4", 4),
                ("n1-highmem-16", "NVIDIA_TESLA_P4", 2),
                ("a2-highgpu-4g", "NVIDIA_TESLA_A100", 4),
                ("g2-standard-24", "NVIDIA_L4", 2),
                ("a3-megagpu-8g", "NVIDIA_H100_MEGA_80GB", 8),
            ]
        )
    )
    pools = [pool(*accelerator, disk=draw(disk_specs))]
    if draw(st.booleans()):
        pools.append(pool(*accelerator, replicas=draw(st.integers(1, 64)), disk=draw(disk_specs)))
        if draw(st.booleans()):
            replicas = draw(st.integers(1, 16))
            rs = pool("n1-highcpu-16", replicas=str(replicas), image=REDUCTION_SERVER)
            disk_type, gb = draw(disk_specs)
            rs["diskSpec"] = {"bootDiskType": disk_type, "bootDiskSizeGb": gb}
            pools.append(rs)
    return job(*pools)


@settings(max_examples=80, deadline=None)
@given(jobs(), st.sampled_from(REGIONS), st.integers(0, 10_000))
def test_total_is_the_sum_of_line_items_and_scales_exactly(spec, region, hours):
    estimate = hourly(spec, region)
    totals = estimate.hourly
    assert totals == Totals.sum(line.hourly for line in estimate.lines)
    assert totals.on_demand == sum(line.hourly.on_demand for line in estimate.lines)
    pools = spec["jobSpec"]["workerPoolSpecs"]
    for line in estimate.lines:
        replicas = int(pools[line.pool]["replicaCount"])
        if line.resource == "disk":
            assert line.quantity == replicas * pools[line.pool]["diskSpec"]["bootDiskSizeGb"]
        elif line.resource == "machine":
            assert line.quantity == replicas
        assert line.hourly.on_demand >= 0
    assert for_duration(estimate, hours) == totals.map(lambda rate: rate * hours)
    assert for_duration(estimate, Decimal(hours) / 2).on_demand in (
        totals.on_demand * hours // 2,
        (totals.on_demand * hours + 1) // 2,
    )
    assert restore(snapshot(estimate)) == estimate
