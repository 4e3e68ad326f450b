"""Properties over generated job requests.

Every accepted request composes to a CustomJob that survives export -> import unchanged (and that
Vertex's own client library reads); every refused one carries at least one error keyed by the
path of a field the request has, so a form or a script can always point at what to change.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.vertexplan.composer.helpers import IMAGE, compose_request
from tests.vertexplan.composer.test_interop import strip_defaults, vertex_reads
from vertexplan import interop
from vertexplan.catalog import get_catalog, is_tpu_pod, resolve_path
from vertexplan.composer import parallelism

_catalog = get_catalog()
ATTACHED = [
    {"machine_type": m, "accelerator_type": acc, "accelerator_count": n}
    for m, combos in _catalog.combinations.items()
    for acc, counts in combos.items()
    for n in counts
]
GPU_POOLS = [p for p in ATTACHED if _catalog.accelerators[p["accelerator_type"]].kind == "gpu"]
TPU_POOLS = [{"machine_type": t.machine_type, "tpu_topology": t.topology}
             for tpu in _catalog.tpu_machines.values() for t in tpu.topologies]
TPU_POOLS += [p for p in ATTACHED if p not in GPU_POOLS]  # cloud-tpu: v2/v3 by acceleratorType
CPU_POOLS = [{"machine_type": m} for m in ("n1-standard-4", "n1-highcpu-16", "e2-standard-8",
                                           "n2-standard-8")]
BROKEN_POOLS = [
    {"machine_type": "a2-highgpu-4g", "accelerator_type": "NVIDIA_TESLA_A100",
     "accelerator_count": 3},
    {"machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_L4", "accelerator_count": 1},
    {"machine_type": "a2-highgpu-1g"},
    {"machine_type": "n1-standard-5"},
    {"machine_type": "ct5lp-hightpu-4t"},
    {"machine_type": ""},
    {"machine_type": "n1-standard-8", "accelerator_count": "two"},
]
machines = st.sampled_from(GPU_POOLS + TPU_POOLS + CPU_POOLS + BROKEN_POOLS)


def optional(draw: st.DrawFn, strategy: st.SearchStrategy[Any]) -> Any:
    return draw(strategy) if draw(st.booleans()) else None


@st.composite
def pools(draw: st.DrawFn, *, replicas: bool = True) -> dict[str, Any]:
    pool = dict(draw(machines))
    if draw(st.booleans()):
        pool["boot_disk_size_gb"] = draw(st.sampled_from([100, 250, 99, 64001]))
    if draw(st.booleans()):
        pool["boot_disk_type"] = draw(st.sampled_from(["pd-ssd", "pd-standard",
                                                       "hyperdisk-balanced", "pd-balanced"]))
    if replicas:
        pool["replica_count"] = draw(st.sampled_from([1, 1, 2, 3, 0]))
    return pool


@st.composite
def job_requests(draw: st.DrawFn) -> dict[str, Any]:
    request: dict[str, Any] = {
        "name": draw(st.sampled_from(["exp", "run-1", "", "x" * 130])),
        "strategy": draw(st.sampled_from([*parallelism.STRATEGIES, "zero4"])),
        "chief": draw(pools(replicas=False)),
    }
    if draw(st.booleans()):
        request["image_uri"] = IMAGE
        request["command"] = draw(st.sampled_from([["python", "train.py"], ["torchrun"]]))
        request["args"] = draw(st.sampled_from([[], ["--x", "1"]]))
    if draw(st.booleans()):
        request["workers"] = draw(pools()) if draw(st.booleans()) else {
            "replica_count": draw(st.sampled_from([1, 3, 0]))}
    if draw(st.integers(0, 3)) == 0:
        request["reduction_server"] = {"replica_count": draw(st.sampled_from([1, 2]))}
    if draw(st.integers(0, 4)) == 0:
        request["evaluators"] = draw(pools())
    value = optional(draw, st.sampled_from(["STANDARD", "SPOT", "FLEX_START", "LOW_COST"]))
    if value:
        request["scheduling_strategy"] = value
    for key, values in (("timeout_hours", [1, 48, 200, 0.5]), ("max_wait_hours", [0, 2]),
                        ("precision", ["fp32", "bf16", "fp16"]),
                        ("disable_retries", [True]),
                        ("restart_job_on_worker_restart", [True, False]),
                        ("base_output_directory", ["gs://my-bucket/run", "/gcs/b"]),
                        ("network", ["projects/123/global/networks/vpc",
                                     "projects/p/global/networks/vpc"]),
                        ("service_account", ["sa@p.iam.gserviceaccount.com", "sa"]),
                        ("env", [{"NCCL_DEBUG": "INFO"}, {"1BAD": "x"}]),
                        ("labels", [{"project": "x"}, {"Team": "x"}, {"cp-job": "1"}]),
                        ("nfs_mounts", [[{"server": "10.0.0.2", "path": "/s",
                                          "mount_point": "d"}],
                                        [{"server": "", "path": "s", "mount_point": "/d"}]]),
                        ("batch", [{"micro_batch_size": 2}, {"global_batch_size": 100,
                                                             "micro_batch_size": 4}]),
                        ("parallelism", [{"tensor": 2}, {"pipeline": 3}]),
                        ("model", [{"parameters": 1_000_000_000},
                                   {"parameters": 70_000_000_000}])):
        if draw(st.integers(0, 3)) == 0:
            request[key] = copy.deepcopy(draw(st.sampled_from(values)))
    if request["strategy"].startswith("zero") and draw(st.booleans()):
        request["deepspeed"] = draw(st.sampled_from([
            {"offload_optimizer": True}, {"offload_params": True}, {"gradient_clipping": 1.0},
            {"optimizer": {"type": "AdamW", "lr": 1e-4}}]))
    if request["strategy"] == "fsdp" and draw(st.booleans()):
        request["fsdp"] = draw(st.sampled_from([{"mode": "shard_grad_op"},
                                                {"mode": "hybrid_shard", "shard_size": 3}]))
    return request


FLEX = {"NVIDIA_L4", "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_H100_80GB",
        "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB", "NVIDIA_B200"}
SINGLE_HOST_TPUS = [p for p in TPU_POOLS if not is_tpu_pod(p["machine_type"],
                                                             p.get("tpu_topology"))]


@st.composite
def sound_requests(draw: st.DrawFn) -> dict[str, Any]:
    """Requests built to be valid (most are accepted), with every kind of option."""
    kind = draw(st.sampled_from(["gpu", "gpu", "cpu", "tpu"]))
    request: dict[str, Any] = {"name": draw(st.sampled_from(["exp", "vlm-run-7"]))}
    own_command = kind == "tpu" or draw(st.booleans())
    if own_command:
        request["image_uri"] = IMAGE
        if draw(st.booleans()):
            request["command"] = ["python", "train.py"]
        else:
            request["image_entrypoint"] = True
        request["args"] = draw(st.sampled_from([[], ["--epochs", "3"]]))
    elif draw(st.booleans()):
        request["args"] = ["--preset", "tiny", "--steps", str(draw(st.integers(1, 500)))]
    if kind == "tpu":
        request["chief"] = dict(draw(st.sampled_from(TPU_POOLS)))
        request["strategy"] = draw(st.sampled_from(parallelism.TPU_STRATEGIES))
        single = request["chief"] in SINGLE_HOST_TPUS
        request["scheduling_strategy"] = draw(st.sampled_from(
            ["STANDARD", "SPOT"] if single else ["STANDARD"]))
        if draw(st.booleans()):
            request["tpu"] = {"sharding": draw(st.sampled_from(parallelism.TPU_SHARDINGS))}
    else:
        request["chief"] = dict(draw(st.sampled_from(GPU_POOLS if kind == "gpu" else CPU_POOLS)))
        request["strategy"] = draw(st.sampled_from(parallelism.GPU_STRATEGIES))
        if draw(st.booleans()):
            request["workers"] = {"replica_count": draw(st.integers(1, 3))}
        if kind == "gpu" and draw(st.integers(0, 2)) == 0:
            request["reduction_server"] = {"replica_count": draw(st.integers(1, 2))}
        if draw(st.integers(0, 3)) == 0:
            request["evaluators"] = {"machine_type": "n1-standard-8", "replica_count": 1,
                                     "args": ["--evaluate"]}
        flex_ok = (request["chief"].get("accelerator_type") in FLEX
                   and "reduction_server" not in request and "evaluators" not in request)
        request["scheduling_strategy"] = draw(st.sampled_from(
            ["STANDARD", "SPOT", *(["FLEX_START"] if flex_ok else [])]))
        if request["scheduling_strategy"] == "FLEX_START" and draw(st.booleans()):
            request["max_wait_hours"] = draw(st.sampled_from([0, 2, 0.5]))
        request["precision"] = draw(st.sampled_from(
            [None, "bf16", "fp32", *(["fp16"] if own_command else [])]))
        if draw(st.booleans()):
            request["batch"] = {"micro_batch_size": draw(st.integers(1, 8))}
            if draw(st.booleans()):
                request["batch"]["gradient_accumulation_steps"] = draw(st.integers(1, 4))
        if request["strategy"].startswith("zero") and draw(st.booleans()):
            request["deepspeed"] = {"gradient_clipping": draw(st.sampled_from([0.5, 1.0])),
                                    "offload_optimizer": draw(st.booleans())}
            if request["strategy"] == "zero3":
                request["deepspeed"]["offload_params"] = draw(st.booleans())
            if own_command and draw(st.booleans()):
                request["deepspeed"]["optimizer"] = {"type": "AdamW", "lr": 3e-4}
                request["deepspeed"]["scheduler"] = {"type": "WarmupDecayLR",
                                                     "warmup_num_steps": 10,
                                                     "total_num_steps": 1000}
        if request["strategy"] == "fsdp":
            request["fsdp"] = {"mode": draw(st.sampled_from(parallelism.FSDP_MODES))}
    if draw(st.booleans()):
        request["timeout_hours"] = draw(st.sampled_from([1, 24, 72, 1.5]))
    if draw(st.booleans()):
        request["disable_retries"] = True
    else:
        request["restart_job_on_worker_restart"] = draw(st.sampled_from([None, True, False]))
    for key, value in (("env", {"NCCL_DEBUG": "INFO", "EMPTY": ""}),
                       ("labels", {"project": "vlm", "owner": "ann"}),
                       ("base_output_directory", "gs://my-bucket/runs/1"),
                       ("network", "projects/123456/global/networks/vpc"),
                       ("service_account", "trainer@p.iam.gserviceaccount.com"),
                       ("enable_web_access", True),
                       ("nfs_mounts", [{"server": "10.0.0.2", "path": "/share",
                                        "mount_point": "data"}]),
                       ("model", {"parameters": 100_000_000})):
        if draw(st.integers(0, 2)) == 0:
            request[key] = copy.deepcopy(value)
    if "network" in request and draw(st.booleans()):
        request["reserved_ip_ranges"] = ["range-1"]
    return request


def present(request: dict[str, Any], key: str) -> bool:
    try:
        found, _ = resolve_path(request, key)
    except ValueError:
        return False
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sound_requests() | job_requests(), st.sampled_from(["yaml", "json"]))
def test_accepted_specs_round_trip_and_refused_ones_point_at_a_field(
        request: dict[str, Any], fmt: str) -> None:
    original = copy.deepcopy(request)
    result = compose_request(request)
    assert request == original, "compose must not change its input"
    event("accepted" if result.ok else "refused")
    if not result.ok:
        keys = list(result.errors)
        assert any(present(request, key) for key in keys), (keys, request)
        return
    custom_job = result.custom_job
    text = interop.export(custom_job, fmt, region="us-central1")
    imported = interop.import_text(text, region="us-central1")
    assert not imported.errors
    again = compose_request(imported.request)
    assert again.ok, again.errors
    assert again.custom_job == custom_job
    assert vertex_reads(custom_job) == strip_defaults(custom_job)
