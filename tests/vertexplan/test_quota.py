"""Which quota a CustomJob draws on: accelerators by type, on-demand or preemptible."""

from __future__ import annotations

from vertexplan import quota


def job(strategy: str | None, *pools: tuple[str, int, int]) -> dict:
    spec: dict = {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "m", "acceleratorType": a, "acceleratorCount": n},
         "replicaCount": str(r)} for a, n, r in pools]}
    if strategy:
        spec["scheduling"] = {"strategy": strategy}
    return {"jobSpec": spec}


def test_on_demand_and_spot_draw_on_separate_quotas() -> None:
    (need,) = quota.needs(job(None, ("NVIDIA_TESLA_A100", 8, 2), ("NVIDIA_TESLA_A100", 4, 1)))
    assert need.count == 20 and not need.preemptible
    assert need.metric == "aiplatform.googleapis.com/custom_model_training_nvidia_a100_gpus"
    assert need.other_metric.endswith("custom_model_training_preemptible_nvidia_a100_gpus")
    for strategy in ("SPOT", "FLEX_START"):
        (spot,) = quota.needs(job(strategy, ("NVIDIA_L4", 1, 3)))
        assert spot.preemptible and spot.metric.endswith("preemptible_nvidia_l4_gpus")


def test_cpu_pools_and_unconfirmed_names_need_no_line() -> None:
    assert quota.needs(job(None, ("", 0, 4))) == []
    assert quota.needs(job(None, ("NVIDIA_GB200", 4, 1))) == []
    types = [n.accelerator for n in quota.needs(job(None, ("NVIDIA_TESLA_T4", 1, 1),
                                                      ("TPU_V5_LITEPOD", 4, 1)))]
    assert types == ["NVIDIA_TESLA_T4", "TPU_V5_LITEPOD"]
