"""Export -> import -> export is the identity, and every export is a CustomJob Vertex reads."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
import yaml
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from tests.vertexplan.composer.helpers import A100_8, CPU, IMAGE, T4_2, compose_request, job
from vertexplan import interop, presets

REGION = "us-central1"
L4 = {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4", "accelerator_count": 1}
VARIED: dict[str, dict[str, Any]] = {
    **{p.slug: p.job_request() for p in presets.PRESETS},
    "fsdp-hybrid-2-nodes": job(strategy="fsdp", chief=dict(A100_8), workers={"replica_count": 1},
                               fsdp={"mode": "hybrid_shard", "shard_size": 8}, precision="bf16",
                               batch={"global_batch_size": 64, "micro_batch_size": 2}),
    "zero3-offload-own-command": job(
        strategy="zero3", image_uri=IMAGE, command=["deepspeed", "train.py"], args=["--x"],
        chief=dict(A100_8), workers={"replica_count": 1, "boot_disk_size_gb": 500},
        deepspeed={"offload_optimizer": True, "offload_params": True, "extra": {
            "wall_clock_breakdown": True}}, precision="bf16",
        parallelism={"tensor": 2, "pipeline": 2}),
    "zero1-builtin-clip": job(strategy="zero1", chief=dict(T4_2), deepspeed={
        "gradient_clipping": 0.5}, batch={"micro_batch_size": 4}, args=["--steps", "10"]),
    "flex-start-everything": job(
        chief=dict(L4), scheduling_strategy="FLEX_START", max_wait_hours=1.5, timeout_hours=12,
        disable_retries=True, base_output_directory="gs://my-bucket/run",
        nfs_mounts=[{"server": "10.0.0.2", "path": "/share", "mount_point": "data"}],
        network="projects/123/global/networks/vpc", reserved_ip_ranges=["r1", "r2"],
        enable_web_access=True, service_account="sa@p.iam.gserviceaccount.com",
        labels={"project": "x", "owner": "ann"}, env={"A": "1", "B": ""}),
    "ps-and-evaluators": job(
        image_uri=IMAGE, command=["python", "-m", "tf_trainer"], chief=dict(CPU),
        workers={"replica_count": 4, "machine_type": "n1-highmem-8"},
        parameter_servers={"machine_type": "n1-highmem-16", "replica_count": 2},
        evaluators={"machine_type": "n1-standard-8", "replica_count": 1, "args": ["--eval"],
                    "env": {"ROLE": "eval"}, "boot_disk_type": "pd-standard"}),
    "tpu-xla-v6e": job(strategy="tpu_xla", image_uri=IMAGE, command=["python", "xla.py"],
                       chief={"machine_type": "ct6e-standard-4t", "tpu_topology": "2x2"}),
    "image-entrypoint-psc": job(image_uri=IMAGE, image_entrypoint=True, args=["serve"],
                                psc_network_attachment="att-1",
                                chief={**CPU, "reservation": {"type": "ANY_RESERVATION"}}),
}


def compose(request: dict[str, Any]) -> dict[str, Any]:
    result = compose_request(request)
    assert result.ok, result.errors
    return result.custom_job


def strip_defaults(value: Any) -> Any:
    """Proto3 JSON leaves out default values (false, 0, "", empty lists and maps)."""
    if isinstance(value, dict):
        out = {k: strip_defaults(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (False, 0, "", [], {}, "0")}
    if isinstance(value, list):
        return [strip_defaults(v) for v in value]
    return value


def vertex_reads(custom_job: dict[str, Any]) -> dict[str, Any]:
    """What google.cloud.aiplatform_v1 makes of the JSON (unknown fields refused), back as JSON."""
    message = aiplatform_v1.CustomJob.from_json(json.dumps(custom_job))
    return json.loads(json_format.MessageToJson(aiplatform_v1.CustomJob.pb(message)))


@pytest.mark.parametrize("name", VARIED)
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_import_export_is_identical(name: str, fmt: str) -> None:
    first = compose(VARIED[name])
    text = interop.export(first, fmt, region=REGION)
    imported = interop.import_text(text, region=REGION)
    assert not imported.errors
    second = compose(imported.request)
    assert second == first
    assert interop.export(second, fmt, region=REGION) == text


@pytest.mark.parametrize("name", VARIED)
def test_every_export_deserialises_into_a_custom_job_without_loss(name: str) -> None:
    custom_job = compose(VARIED[name])
    assert vertex_reads(custom_job) == strip_defaults(custom_job)
    from_yaml = yaml.safe_load(interop.export(custom_job, "yaml", region=REGION))
    spec = aiplatform_v1.CustomJobSpec.from_json(json.dumps(from_yaml))
    assert json.loads(json_format.MessageToJson(aiplatform_v1.CustomJobSpec.pb(spec))) == \
        strip_defaults(custom_job["jobSpec"])


def test_the_strategy_is_read_back_from_what_it_generated() -> None:
    for name, strategy in (("vlm-finetune-4x8-a100-zero2", "zero2"),
                           ("fsdp-hybrid-2-nodes", "fsdp"), ("zero3-offload-own-command", "zero3"),
                           ("zero1-builtin-clip", "zero1"), ("tpu-xla-v6e", "tpu_xla")):
        text = interop.export(compose(VARIED[name]), "json", region=REGION)
        request = interop.import_text(text, region=REGION).request
        assert request["strategy"] == strategy, name
    imported = interop.import_text(interop.export(compose(VARIED["zero1-builtin-clip"]), "yaml",
                                                  region=REGION), region=REGION).request
    assert "command" not in imported  # the built-in trainer, its flags read back
    assert imported["args"] == ["--steps", "10"]
    assert imported["deepspeed"] == {"gradient_clipping": 0.5}


@pytest.mark.parametrize("slug", ["llama3-8b-tp2-fsdp4-a100", "llama3-70b-tp8-pp2-dp2-h100"])
def test_a_model_parallel_job_reads_back_without_its_launcher_flag(slug: str) -> None:
    """``--nproc-per-node`` is derived from the machine: it is no user argument on import."""
    preset = presets.get(slug).job_request()
    text = interop.export(compose(preset), "json", region=REGION)
    imported = interop.import_text(text, region=REGION).request
    assert "command" not in imported
    assert "--nproc-per-node" not in imported.get("args", [])
    assert imported.get("args", []) == preset.get("args", [])
    # The flag the composer writes from model.activation_checkpointing is read back there.
    assert imported["model"]["activation_checkpointing"] == \
        preset["model"]["activation_checkpointing"]
    assert imported["parallelism"]["tensor"] == preset["parallelism"]["tensor"]


def test_the_yaml_is_gclouds_config_file_with_its_command_line() -> None:
    custom_job = compose(VARIED["flex-start-everything"])
    text = interop.export(custom_job, "yaml", region=REGION, filename="exp.yaml")
    first = text.splitlines()[0]
    assert first == ("# gcloud ai custom-jobs create --region=us-central1 --display-name=exp "
                     "--labels=project=x,owner=ann --config=exp.yaml")
    body = yaml.safe_load(text)
    assert set(body) <= {"workerPoolSpecs", "scheduling", "serviceAccount", "network",
                         "reservedIpRanges", "baseOutputDirectory", "enableWebAccess",
                         "pscInterfaceConfig"}
    assert "&id" not in text  # no YAML anchors


def test_a_gcloud_spec_with_a_single_pool_mapping_imports() -> None:
    text = """
workerPoolSpecs:
  machineSpec:
    machineType: n1-highmem-2
  replicaCount: 1
  containerSpec:
    imageUri: gcr.io/ucaip-test/ucaip-training-test
    args:
    - port=8500
    command:
    - start
"""
    imported = interop.import_text(text, region=REGION)
    assert imported.kind == "CustomJobSpec"
    assert imported.request["chief"] == {"machine_type": "n1-highmem-2"}
    assert imported.request["command"] == ["start"]
    assert imported.warnings


def test_a_described_job_with_output_fields_and_numbers_imports() -> None:
    described = {
        "name": "projects/1/locations/us-central1/customJobs/9", "state": "JOB_STATE_FAILED",
        "createTime": "2026-01-01T00:00:00Z", "displayName": "old",
        "jobSpec": {"workerPoolSpecs": [{
            "machineSpec": {"machineType": "n1-standard-8", "acceleratorType": 5,
                            "acceleratorCount": 2},
            "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}}],
            "scheduling": {"strategy": 4}},
    }
    imported = interop.to_request(described, region=REGION)
    assert not imported.errors
    request = imported.request
    assert request["chief"]["accelerator_type"] == "NVIDIA_TESLA_T4"
    assert request["scheduling_strategy"] == "SPOT"
    assert request["image_entrypoint"] is True
    result = compose_request(request)
    assert result.ok, result.errors
    # Vertex's defaults written out, nothing else changed.
    assert result.custom_job["jobSpec"]["workerPoolSpecs"][0]["diskSpec"] == {
        "bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}
    assert result.custom_job["jobSpec"]["scheduling"]["restartJobOnWorkerRestart"] is False


def test_what_the_composer_cannot_carry_is_refused_by_path() -> None:
    spec = {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"},
                                 "replicaCount": "1",
                                 "lustreMounts": [{"instanceIp": "10.0.0.2"}],
                                 "containerSpec": {"imageUri": IMAGE}}]}
    imported = interop.to_request({"displayName": "x", "jobSpec": spec}, region=REGION)
    assert set(imported.errors) == {"jobSpec.workerPoolSpecs[0].lustreMounts"}


def test_a_python_package_job_and_a_mig_partition_are_carried() -> None:
    spec = {"workerPoolSpecs": [{"machineSpec": {"machineType": "a3-highgpu-1g",
                                                 "acceleratorType": "NVIDIA_H100_80GB",
                                                 "acceleratorCount": 1,
                                                 "gpuPartitionSize": "1g.10gb"},
                                 "replicaCount": "1",
                                 "pythonPackageSpec": {
                                     "executorImageUri": IMAGE,
                                     "packageUris": ["gs://b/trainer-0.1.tar.gz"],
                                     "pythonModule": "trainer.task",
                                     "args": ["--lr", "0.1"]}}]}
    imported = interop.to_request({"displayName": "x", "jobSpec": spec}, region=REGION)
    assert imported.errors == {}
    assert imported.request["python_package"] == {
        "executor_image_uri": IMAGE, "package_uris": ["gs://b/trainer-0.1.tar.gz"],
        "python_module": "trainer.task"}
    assert imported.request["chief"]["gpu_partition_size"] == "1g.10gb"
    composed = compose_request(imported.request).custom_job["jobSpec"]["workerPoolSpecs"][0]
    assert composed["pythonPackageSpec"] == spec["workerPoolSpecs"][0]["pythonPackageSpec"]
    assert composed["machineSpec"]["gpuPartitionSize"] == "1g.10gb"


def test_not_a_job_is_an_import_error() -> None:
    for text in ("- a\n- b\n", "{not json", "foo: 1\n"):
        with pytest.raises(interop.ImportFailed):
            interop.import_text(text, region=REGION)


def test_the_python_snippet_submits_the_same_custom_job() -> None:
    custom_job = compose(VARIED["vlm-finetune-4x8-a100-zero2"])
    source = interop.export(custom_job, "python", region=REGION, project="my-project")
    tree = ast.parse(source)
    assignments = {node.targets[0].id: node.value for node in tree.body
                   if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    assert ast.literal_eval(assignments["CUSTOM_JOB"]) == custom_job
    assert ast.literal_eval(assignments["REGION"]) == REGION
    assert "aiplatform_v1.JobServiceClient" in source and "create_custom_job" in source
