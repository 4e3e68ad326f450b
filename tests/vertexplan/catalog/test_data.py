"""The shipped CSV data: provenance on every row, and agreement with VERTEX_FACTS.md."""

from __future__ import annotations

import csv
from importlib import resources

import pytest

from vertexplan.catalog import CatalogError, get_catalog
from vertexplan.catalog.loader import build_catalog

DATA_FILES = (
    "machine_types.csv",
    "accelerators.csv",
    "accelerator_combinations.csv",
    "tpu_machines.csv",
    "tpu_topologies.csv",
    "regions.csv",
    "boot_disk_types.csv",
)

# VERTEX_FACTS.md section 3: AcceleratorType names and numbers.
ENUM = {
    "NVIDIA_TESLA_K80": 1, "NVIDIA_TESLA_P100": 2, "NVIDIA_TESLA_V100": 3, "NVIDIA_TESLA_P4": 4,
    "NVIDIA_TESLA_T4": 5, "TPU_V2": 6, "TPU_V3": 7, "NVIDIA_TESLA_A100": 8,
    "NVIDIA_A100_80GB": 9, "TPU_V4_POD": 10, "NVIDIA_L4": 11, "TPU_V5_LITEPOD": 12,
    "NVIDIA_H100_80GB": 13, "NVIDIA_H100_MEGA_80GB": 14, "NVIDIA_H200_141GB": 15,
    "NVIDIA_B200": 16, "NVIDIA_GB200": 17, "NVIDIA_RTX_PRO_6000": 18,
}  # fmt: skip

MEMORY_GB = {
    "NVIDIA_TESLA_T4": 16, "NVIDIA_TESLA_P4": 8, "NVIDIA_TESLA_P100": 16,
    "NVIDIA_TESLA_V100": 16, "NVIDIA_TESLA_A100": 40, "NVIDIA_A100_80GB": 80, "NVIDIA_L4": 24,
    "NVIDIA_H100_80GB": 80, "NVIDIA_H100_MEGA_80GB": 80, "NVIDIA_H200_141GB": 141,
    "NVIDIA_B200": 180, "TPU_V5_LITEPOD": 16, "TPU_V2": 8, "TPU_V3": 16,
}  # fmt: skip


def _text(name: str) -> str:
    return resources.files("vertexplan.catalog").joinpath("data", name).read_text("utf-8")


@pytest.mark.parametrize("name", DATA_FILES)
def test_every_row_says_where_and_when_it_was_read(name: str) -> None:
    rows = list(csv.DictReader(_text(name).splitlines()))
    assert rows
    for row in rows:
        assert row["source"].strip(), row
        assert row["retrieved"].startswith("20"), row


def test_accelerator_enum_matches_vertex_facts() -> None:
    accelerators = get_catalog().accelerators
    assert {name: a.number for name, a in accelerators.items()} == ENUM
    assert accelerators["NVIDIA_TESLA_K80"].deprecated


@pytest.mark.parametrize(("name", "memory"), sorted(MEMORY_GB.items()))
def test_device_memory(name: str, memory: float) -> None:
    assert get_catalog().accelerators[name].memory_gb == memory


def test_well_known_machine_figures() -> None:
    machines = get_catalog().machines
    assert (machines["n1-standard-8"].vcpus, machines["n1-standard-8"].memory_gb) == (8, 30)
    assert machines["n1-highmem-16"].memory_gb == 104
    assert machines["n1-highcpu-16"].memory_gb == pytest.approx(14.4)
    assert (machines["a2-highgpu-1g"].vcpus, machines["a2-highgpu-1g"].memory_gb) == (12, 85)
    assert (machines["a3-highgpu-8g"].vcpus, machines["a3-highgpu-8g"].memory_gb) == (208, 1872)
    assert machines["g2-standard-24"].memory_gb == 96
    for machine in machines.values():
        if machine.note.startswith("UNCONFIRMED"):
            assert machine.source


def test_tpu_hbm_per_chip() -> None:
    tpus = get_catalog().tpu_machines
    assert tpus["ct5lp-hightpu-4t"].hbm_gb_per_chip == 16
    assert tpus["ct6e-standard-4t"].hbm_gb_per_chip == 32


def test_regions_have_their_multi_region_reduction_server() -> None:
    regions = get_catalog().regions
    for name in ("us-central1", "europe-west4", "asia-southeast1"):
        prefix = name.split("-")[0]
        assert regions[name].reduction_server_image == (
            f"{prefix}-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"
        )


def test_the_catalogue_is_read_once() -> None:
    assert get_catalog() is get_catalog()


def test_a_renamed_column_fails_loudly() -> None:
    broken = _text("regions.csv").replace("multi_region", "multiregion", 1)
    with pytest.raises(CatalogError, match="columns"):
        build_catalog({"regions.csv": broken})


def test_a_row_without_provenance_fails() -> None:
    lines = _text("boot_disk_types.csv").splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ","
    with pytest.raises(CatalogError, match="source and retrieved"):
        build_catalog({"boot_disk_types.csv": "\n".join(lines)})


def test_a_combination_for_an_unknown_machine_fails() -> None:
    text = _text("accelerator_combinations.csv") + "z9-mega-1g,NVIDIA_L4,1,test,2026-11\n"
    with pytest.raises(CatalogError, match="unknown machine type"):
        build_catalog({"accelerator_combinations.csv": text})
