"""Every combination of VERTEX_FACTS.md section 3, accepted, and its neighbours, refused.

The tables are written out here again, independently of the CSV files, so a mistake in the data
shows up as a failing case.
"""

from __future__ import annotations

import pytest

from tests.vertexplan.catalog.factories import only_error, single
from vertexplan.catalog import get_catalog, validate_custom_job

# machine_type -> (accelerator_type, counts)
BUNDLED = {
    "a2-highgpu-1g": ("NVIDIA_TESLA_A100", (1,)),
    "a2-highgpu-2g": ("NVIDIA_TESLA_A100", (2,)),
    "a2-highgpu-4g": ("NVIDIA_TESLA_A100", (4,)),
    "a2-highgpu-8g": ("NVIDIA_TESLA_A100", (8,)),
    "a2-megagpu-16g": ("NVIDIA_TESLA_A100", (16,)),
    "a2-ultragpu-1g": ("NVIDIA_A100_80GB", (1,)),
    "a2-ultragpu-2g": ("NVIDIA_A100_80GB", (2,)),
    "a2-ultragpu-4g": ("NVIDIA_A100_80GB", (4,)),
    "a2-ultragpu-8g": ("NVIDIA_A100_80GB", (8,)),
    "a3-highgpu-1g": ("NVIDIA_H100_80GB", (1,)),
    "a3-highgpu-2g": ("NVIDIA_H100_80GB", (2,)),
    "a3-highgpu-4g": ("NVIDIA_H100_80GB", (4,)),
    "a3-highgpu-8g": ("NVIDIA_H100_80GB", (8,)),
    "a3-megagpu-8g": ("NVIDIA_H100_MEGA_80GB", (8,)),
    "a3-ultragpu-8g": ("NVIDIA_H200_141GB", (8,)),
    "a4-highgpu-8g": ("NVIDIA_B200", (8,)),
    "g2-standard-4": ("NVIDIA_L4", (1,)),
    "g2-standard-8": ("NVIDIA_L4", (1,)),
    "g2-standard-12": ("NVIDIA_L4", (1,)),
    "g2-standard-16": ("NVIDIA_L4", (1,)),
    "g2-standard-32": ("NVIDIA_L4", (1,)),
    "g2-standard-24": ("NVIDIA_L4", (2,)),
    "g2-standard-48": ("NVIDIA_L4", (4,)),
    "g2-standard-96": ("NVIDIA_L4", (8,)),
}

N1_COLUMNS = ("NVIDIA_TESLA_P4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_V100")
_ROWS = (
    (
        ("n1-standard-4", "n1-standard-8", "n1-highmem-2", "n1-highmem-4", "n1-highmem-8"),
        ((1, 2, 4), (1, 2, 4), (1, 2, 4), (1, 2, 4, 8)),
    ),
    (
        ("n1-standard-16", "n1-highmem-16", "n1-highcpu-16"),
        ((1, 2, 4), (1, 2, 4), (1, 2, 4), (2, 4, 8)),
    ),
    (("n1-standard-32", "n1-highmem-32", "n1-highcpu-32"), ((2, 4), (2, 4), (2, 4), (4, 8))),
    (("n1-highcpu-64",), ((4,), (4,), (4,), (8,))),
    (
        ("n1-standard-64", "n1-standard-96", "n1-highmem-64", "n1-highmem-96", "n1-highcpu-96"),
        ((4,), (), (4,), (8,)),  # P100: "-"
    ),
)
N1 = {
    machine: dict(zip(N1_COLUMNS, cells, strict=True))
    for names, cells in _ROWS
    for machine in names
}

TPU_POD = {"2x2": 1, "2x4": 2, "4x4": 4, "4x8": 8, "8x8": 16, "8x16": 32, "16x16": 64}
TPU = {  # machine -> topology -> VMs
    "ct5lp-hightpu-1t": {"1x1": 1},
    "ct5lp-hightpu-4t": TPU_POD,
    "ct5lp-hightpu-8t": {"2x4": 1},
    "ct6e-standard-1t": {"1x1": 1},
    "ct6e-standard-4t": TPU_POD,
    "ct6e-standard-8t": {"2x4": 1},
    # v5p: 3D topologies, 4 chips per VM (Cloud TPU docs; UNCONFIRMED for Vertex training).
    "ct5p-hightpu-4t": {"2x2x1": 1, "2x2x2": 2, "2x2x4": 4, "2x4x4": 8, "4x4x4": 16,
                        "4x4x8": 32},
}
ALL_TOPOLOGIES = sorted({t for topologies in TPU.values() for t in topologies})

GPU_CASES = [(m, acc, n) for m, (acc, counts) in BUNDLED.items() for n in counts] + [
    (m, acc, n) for m, cells in N1.items() for acc, counts in cells.items() for n in counts
]
N1_EMPTY_CELLS = [
    (m, acc) for m, cells in N1.items() for acc, counts in cells.items() if not counts
]
TPU_CASES = [(m, t) for m, topologies in TPU.items() for t in topologies]

ACC_PATH = "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"
COUNT_PATH = "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"
TOPOLOGY_PATH = "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"


def test_the_data_holds_exactly_these_tables() -> None:
    catalog = get_catalog()
    expected = {m: {acc: counts} for m, (acc, counts) in BUNDLED.items()}
    expected |= {m: {a: c for a, c in cells.items() if c} for m, cells in N1.items()}
    expected["cloud-tpu"] = {"TPU_V2": (8,), "TPU_V3": (8,)}
    assert catalog.combinations == expected
    topologies = {
        name: {t.topology: t.vms for t in tpu.topologies}
        for name, tpu in catalog.tpu_machines.items()
    }
    assert topologies == TPU


@pytest.mark.parametrize(("machine", "acc", "count"), GPU_CASES)
def test_gpu_combination_and_its_neighbours(machine: str, acc: str, count: int) -> None:
    assert validate_custom_job(single(machine, acc, count)) == []
    assert validate_custom_job(single(machine, acc, str(count))) == []  # proto JSON int as text

    allowed = BUNDLED[machine][1] if machine in BUNDLED else N1[machine][acc]
    for wrong in (count * 2, count // 2):
        if wrong and wrong not in allowed:
            error = only_error(validate_custom_job(single(machine, acc, wrong)))
            assert error.path == COUNT_PATH
            assert f"{machine} takes" in error.message and str(wrong) in error.message
            assert error.suggestions

    other = "NVIDIA_L4" if acc != "NVIDIA_L4" else "NVIDIA_TESLA_T4"  # not offered on machine
    error = only_error(validate_custom_job(single(machine, other, count)))
    assert error.path == ACC_PATH
    assert machine in error.message and other in error.message


@pytest.mark.parametrize("machine", sorted(BUNDLED))
def test_bundled_machines_need_their_gpus(machine: str) -> None:
    acc, (count,) = BUNDLED[machine]
    error = only_error(validate_custom_job(single(machine)))
    assert error.path == ACC_PATH
    assert f"{machine} comes with {count} {acc}" in error.message
    assert error.suggestions == (acc,)


@pytest.mark.parametrize(("machine", "acc"), N1_EMPTY_CELLS)
def test_n1_cells_marked_dash_are_refused(machine: str, acc: str) -> None:
    error = only_error(validate_custom_job(single(machine, acc, 4)))
    assert error.path == ACC_PATH


@pytest.mark.parametrize("machine", sorted(N1))
def test_n1_machines_run_without_gpus(machine: str) -> None:
    assert validate_custom_job(single(machine)) == []


@pytest.mark.parametrize(("machine", "topology"), TPU_CASES)
def test_tpu_topology_and_its_neighbours(machine: str, topology: str) -> None:
    assert validate_custom_job(single(machine, topology=topology)) == []
    pod = TPU[machine][topology] > 1
    spot = validate_custom_job(single(machine, topology=topology, strategy="SPOT"))
    if pod:
        error = only_error(spot)
        assert error.path == "jobSpec.scheduling.strategy"
        assert "TPU Pods" in error.message
    else:
        assert spot == []
    for wrong in ALL_TOPOLOGIES:
        if wrong not in TPU[machine]:
            error = only_error(validate_custom_job(single(machine, topology=wrong)))
            assert error.path == TOPOLOGY_PATH
            assert machine in error.message and wrong in error.message


@pytest.mark.parametrize("machine", sorted(TPU))
def test_a_gpu_on_a_tpu_machine_is_refused(machine: str) -> None:
    topology = next(iter(TPU[machine]))
    error = only_error(validate_custom_job(single(machine, "NVIDIA_L4", 1, topology)))
    assert error.path == ACC_PATH


@pytest.mark.parametrize("acc", ["TPU_V2", "TPU_V3"])
def test_cloud_tpu_takes_eight(acc: str) -> None:
    assert validate_custom_job(single("cloud-tpu", acc, 8)) == []
    assert validate_custom_job(single("cloud-tpu", acc, 8, strategy="SPOT")) == []
    for wrong in (4, 16):
        error = only_error(validate_custom_job(single("cloud-tpu", acc, wrong)))
        assert error.path == COUNT_PATH and "cloud-tpu takes 8" in error.message
    error = only_error(validate_custom_job(single("cloud-tpu")))
    assert error.path == ACC_PATH
    error = only_error(validate_custom_job(single("cloud-tpu", "TPU_V5_LITEPOD", 8)))
    assert error.path == ACC_PATH and "ct5lp-hightpu" in error.message
