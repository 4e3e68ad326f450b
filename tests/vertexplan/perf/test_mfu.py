"""MFU's parts: the model FLOPs per token, the peak table and the basis of a job's MFU."""

from __future__ import annotations

import re
from typing import Any

import pytest

from vertexplan.catalog import describe_machine_spec, get_catalog
from vertexplan.perf import (
    ModelShape,
    flops_per_token,
    job_devices,
    mfu_basis,
    peak_flops,
    peak_table,
    shape_from_event,
)

# A run_started event of the built-in trainer's "small" preset, as it prints it.
SMALL = {"rank": 0, "world_size": 16, "strategy": "ddp", "params": 10_745_088, "n_layer": 6,
         "n_head": 6, "d_model": 384, "seq_len": 256, "precision": "bf16"}


def pools(*specs: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": spec, "replicaCount": str(replicas)} for replicas, spec in specs]}}


A100_X8 = {"machineType": "a2-highgpu-8g", "acceleratorType": "NVIDIA_TESLA_A100",
           "acceleratorCount": 8}


def test_flops_per_token_is_6n_plus_12lhqt() -> None:
    # 6 x 1,000 + 12 x 2 layers x 4 heads x 16 dims x 128 tokens = 6,000 + 196,608
    assert flops_per_token(ModelShape(params=1_000, n_layer=2, n_head=4, d_model=64,
                                      seq_len=128)) == 202_608
    # nanoGPT's GPT-2 (124M) in estimate_mfu: N = 124,337,152 (no position embeddings),
    # L = H = 12, Q = 64, T = 1024: 746,022,912 + 113,246,208.
    assert flops_per_token(ModelShape(124_337_152, 12, 12, 768, 1024)) == 859_269_120


def test_shape_comes_from_run_started_and_says_what_is_missing() -> None:
    assert shape_from_event(SMALL) == ModelShape(10_745_088, 6, 6, 384, 256)
    # Numbers through protobuf Struct arrive as floats.
    assert shape_from_event({**SMALL, "n_layer": 6.0}) == ModelShape(10_745_088, 6, 6, 384, 256)
    reason = shape_from_event({"params": 10, "n_layer": True, "n_head": 2})
    assert isinstance(reason, str)
    assert "n_layer (layers)" in reason and "d_model (model width)" in reason
    assert "params" not in reason.split("model's", 1)[1].split(",")[0]
    assert "not divisible" in str(shape_from_event({**SMALL, "n_head": 5}))


def test_every_accelerator_of_the_catalogue_has_a_peak_with_source_and_date() -> None:
    catalog = get_catalog()
    names = set(catalog.accelerators)
    # A TPU machine with no AcceleratorType is named as describe_machine_spec names it.
    names |= {m.accelerator_type or f"TPU {m.generation}" for m in catalog.tpu_machines.values()}
    assert describe_machine_spec({"machineType": "ct5p-hightpu-4t", "tpuTopology": "2x2x1"}
                                 ).accelerator_type == "TPU v5p"
    table = peak_table()
    assert names - set(table) == set()
    for name in names:
        row = table[name]
        assert row.source and re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", row.retrieved), name
        assert all(value > 0 for value in row.tflops.values()), name
        assert row.unit.startswith("tpu") == (name.startswith("TPU")), name
    # Dense figures, not the datasheets' sparse ones.
    assert table["NVIDIA_H100_80GB"].tflops["bf16"] == 989.5
    assert table["NVIDIA_TESLA_A100"].tflops["bf16"] == 312


def test_peak_by_precision_and_the_reasons_when_there_is_none() -> None:
    a100 = peak_flops("NVIDIA_TESLA_A100", "fp32")
    assert not isinstance(a100, str) and a100.flops == 19.5e12
    assert peak_flops("NVIDIA_TESLA_V100", "bf16") == (
        "NVIDIA_TESLA_V100 has no bf16 peak (no fast bf16 arithmetic)")
    v100 = peak_flops("NVIDIA_TESLA_V100", "fp16")
    assert not isinstance(v100, str) and v100.flops == 125e12
    # A TPU's fp32 matrix products run in bf16 on the MXU: measured against that peak.
    tpu = peak_flops("TPU v6e", "fp32")
    assert not isinstance(tpu, str) and tpu.precision == "bf16" and tpu.flops == 918e12
    assert "no peak FLOP/s known" in str(peak_flops("NVIDIA_QUANTUM", "bf16"))
    assert "unknown precision 'int4'" in str(peak_flops("NVIDIA_L4", "int4"))


def test_devices_count_every_replica_and_vm_but_not_cpu_pools() -> None:
    job = pools((2, A100_X8), (0, {}), (1, {"machineType": "n1-standard-16"}))
    job["jobSpec"]["workerPoolSpecs"][1] = {}
    devices = job_devices(job)
    assert not isinstance(devices, str)
    assert (devices.accelerator, devices.count) == ("NVIDIA_TESLA_A100", 16)
    v6e = job_devices(pools((1, {"machineType": "ct6e-standard-4t", "tpuTopology": "4x4"})))
    assert not isinstance(v6e, str) and v6e.accelerator == "TPU v6e" and v6e.count == 16
    assert "no GPU or TPU" in str(job_devices(pools((1, {"machineType": "n1-standard-4"}))))
    mixed = pools((1, A100_X8), (1, {"machineType": "g2-standard-4",
                                     "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}))
    assert "mix accelerators (NVIDIA_L4, NVIDIA_TESLA_A100)" in str(job_devices(mixed))


def test_mfu_of_a_step_against_a_hand_computed_value() -> None:
    basis = mfu_basis(SMALL, pools((2, A100_X8)), None)
    assert not isinstance(basis, str)
    # 6 x 10,745,088 + 12 x 6 x 6 x 64 x 256 = 64,470,528 + 7,077,888 = 71,548,416 FLOPs/token
    assert basis.flops_per_token == 71_548_416
    # 1,000,000 tokens/s on 16 A100s at 312 TFLOP/s bf16
    assert basis.mfu(1_000_000.0) == pytest.approx(71_548_416e6 / (16 * 312e12))
    assert basis.mfu(None) is None
    assert "16 x NVIDIA_TESLA_A100 at 312 TFLOP/s bf16" in basis.describe()
    assert "NVIDIA A100 Tensor Core GPU datasheet, 2026-11" in basis.describe()
    # The job's own precision when run_started has none; run_started's wins otherwise.
    fp32 = mfu_basis({k: v for k, v in SMALL.items() if k != "precision"}, pools((2, A100_X8)),
                     "fp32")
    assert not isinstance(fp32, str) and fp32.peak.flops == 19.5e12


def test_why_mfu_cannot_be_computed() -> None:
    job = pools((1, A100_X8))
    assert "no run_started" in str(mfu_basis(None, job, "bf16"))
    assert "does not report the model's n_layer" in str(mfu_basis({"params": 10}, job, "bf16"))
    no_precision = {k: v for k, v in SMALL.items() if k != "precision"}
    assert "precision" in str(mfu_basis(no_precision, job, None))
    v100 = pools((1, {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_V100",
                      "acceleratorCount": 1}))
    assert "no bf16 peak" in str(mfu_basis(SMALL, v100, None))
