"""Specs as teams write them (gcloud --config YAML, REST JSON bodies, Python SDK and GAPIC dicts),
each imported, validated and exported: a valid one composes to the CustomJob it asked for (no
semantic change, as google.cloud.aiplatform_v1 reads both) and survives export -> import in
every format; an invalid one is refused on the path of what is wrong."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from tests.vertexplan.composer.helpers import compose_request
from vertexplan import composer, interop
from vertexplan.catalog import validate_custom_job
from vertexplan.catalog.normalize import normalize_custom_job
from vertexplan.interop import wandb_launch

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(p.name for p in CORPUS.iterdir() if p.suffix in (".yaml", ".json", ".py"))
DEFAULT_REGION = "us-central1"
POOLS = "jobSpec.workerPoolSpecs"
# Each invalid spec and the path its error must be on.
INVALID = {
    "invalid_use_spot_in_pool.yaml": f"{POOLS}[0].useSpot",
    "invalid_scheduling_preemptible.yaml": "jobSpec.scheduling.preemptible",
    "invalid_gpu_count.json": f"{POOLS}[0].machineSpec.gpuCount",
    "invalid_working_dir.yaml": f"{POOLS}[0].containerSpec.workingDir",
    "invalid_job_priority.json": "priority",
    "invalid_h100_europe_north1.yaml": f"{POOLS}[0].machineSpec.acceleratorType",
    "invalid_tpu_v5e_sao_paulo.yaml": f"{POOLS}[0].machineSpec.machineType",
    "invalid_snake_typo.py": f"{POOLS}[0].machineSpec.machine_tpye",
    "invalid_t4_count.json": f"{POOLS}[0].machineSpec.acceleratorCount",
    "invalid_reservation_name.yaml": f"{POOLS}[0].machineSpec.reservationAffinity.reservationName",
    "invalid_env_value_from.json": f"{POOLS}[0].containerSpec.env[0].valueFrom",
    "invalid_small_boot_disk.yaml": f"{POOLS}[0].diskSpec.bootDiskSizeGb",
    "invalid_pool_own_package_module.json": f"{POOLS}[1].pythonPackageSpec.pythonModule",
    "invalid_container_chief_package_workers.yaml": f"{POOLS}[1].pythonPackageSpec",
    "invalid_python_run_not_literal.py": "run(scheduling_strategy=)",
    "invalid_python_run_training_job_args.py": "run(replica_count=)",
}
VALID = [name for name in FILES if name not in INVALID]


def test_the_corpus_holds_at_least_thirty_specs_in_every_form() -> None:
    assert len(FILES) >= 30
    assert {Path(name).suffix for name in VALID} == {".yaml", ".json", ".py"}
    assert {Path(name).suffix for name in INVALID} == {".yaml", ".json", ".py"}
    assert set(INVALID) <= set(FILES)


def imported(name: str) -> interop.Imported:
    return interop.import_text((CORPUS / name).read_text(), region=DEFAULT_REGION,
                               filename=name)


def errors_of(result: interop.Imported) -> dict[str, list[str]]:
    """Every refusal of the document, keyed by its own paths: Vertex's rules, what import
    cannot carry, the composer's."""
    region = result.request["region"]
    errors: dict[str, list[str]] = {}
    for error in validate_custom_job(result.custom_job, region):
        errors.setdefault(error.path, []).append(error.message)
    for path, messages in result.errors.items():
        errors.setdefault(path, []).extend(messages)
    if not errors:
        composed = compose_request(result.request)
        for key, messages in composed.errors.items():
            path = composer.custom_job_path_for(key, result.custom_job)
            errors.setdefault(path, []).extend(messages)
    return errors


def vertex_reads(job: dict[str, Any]) -> dict[str, Any]:
    """What aiplatform_v1 makes of a CustomJob (unknown fields refused), with Vertex's defaults
    written out: the job's meaning, whichever way it was spelled."""
    message = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
    json_format.ParseDict(job, message, ignore_unknown_fields=False)
    out = json.loads(json_format.MessageToJson(message))
    spec = out.setdefault("jobSpec", {})
    for pool in spec.get("workerPoolSpecs", []):
        if pool:
            disk = pool.setdefault("diskSpec", {})
            disk.setdefault("bootDiskType", "pd-ssd")
            disk.setdefault("bootDiskSizeGb", 100)
            pool.setdefault("replicaCount", "1")
    scheduling = spec.setdefault("scheduling", {})
    if scheduling.get("strategy") in (None, "STRATEGY_UNSPECIFIED"):
        scheduling["strategy"] = "STANDARD"
    return out


@pytest.mark.parametrize("name", VALID)
def test_a_valid_spec_composes_to_what_it_asked_for_and_round_trips(name: str) -> None:
    result = imported(name)
    assert errors_of(result) == {}, name
    composed = compose_request(result.request)
    assert composed.ok, composed.errors
    asked, _ = normalize_custom_job(result.custom_job)
    assert vertex_reads(composed.custom_job) == vertex_reads(asked)
    for fmt in interop.FORMATS:
        text = interop.export(composed.custom_job, fmt, region=result.request["region"])
        # A W&B Launch queue config has no display name (W&B names the run): ?name= gives it.
        name = composed.custom_job["displayName"] if fmt == "wandb" else ""
        again = interop.import_text(text, region=DEFAULT_REGION, name=name)
        assert again.errors == {}, (fmt, again.errors)
        back = compose_request(again.request).custom_job
        if fmt == "wandb":
            # Equal but for the fields the export says it could not carry.
            lost = wandb_launch.unsupported(composed.custom_job)
            assert _without(back, lost) == _without(composed.custom_job, lost), fmt
        else:
            assert back == composed.custom_job, fmt


def _without(custom_job: dict, paths: list[str]) -> dict:
    out = copy.deepcopy(custom_job)
    for path in paths:
        *parents, last = path.split(".")
        node = out
        for part in parents:
            node = node.get(part) or {}
        node.pop(last, None)
    return out


@pytest.mark.parametrize("name", sorted(INVALID))
def test_an_invalid_spec_is_refused_on_the_right_path(name: str) -> None:
    errors = errors_of(imported(name))
    assert INVALID[name] in errors, (name, errors)


def test_strings_are_kept_byte_for_byte() -> None:
    composed = compose_request(imported("gcloud_bash_script_env.yaml").request).custom_job
    container = composed["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert container["args"] == ['set -e\necho "  indented  "\npython train.py\n']
    assert container["env"] == [{"name": "GREETING", "value": "  spaced value  "},
                                {"name": "MULTILINE", "value": "line one\nline two\n"}]


def test_a_gcloud_file_is_named_by_its_flag_else_the_file() -> None:
    assert imported("gcloud_single_pool_mapping.yaml").request["name"] == "ucaip-test"
    assert imported("gcloud_t4_list.yaml").request["name"] == "gcloud_t4_list"
    result = interop.import_text((CORPUS / "gcloud_t4_list.yaml").read_text(),
                                 region=DEFAULT_REGION, name="asked-for")
    assert result.request["name"] == "asked-for"


def test_workers_keep_the_reservation_they_inherit_with_the_machine() -> None:
    composed = compose_request(imported("gcloud_h100_reservation_workers.yaml").request)
    chief, workers = composed.custom_job["jobSpec"]["workerPoolSpecs"][:2]
    assert workers["machineSpec"]["reservationAffinity"] == \
        chief["machineSpec"]["reservationAffinity"]
    assert workers["machineSpec"]["reservationAffinity"]["reservationAffinityType"] == \
        "SPECIFIC_RESERVATION"


def test_a_sub_second_timeout_is_kept() -> None:
    composed = compose_request(imported("gcloud_subsecond_timeout.yaml").request)
    assert composed.custom_job["jobSpec"]["scheduling"]["timeout"] == "3600.5s"


@pytest.mark.parametrize(("key", "value"), [
    ("executorImageUri", "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest"),
    ("packageUris", ["gs://my-bucket/worker-0.1.tar.gz"]),
])
def test_a_pool_with_its_own_package_is_refused_never_run_as_the_chiefs(key: str,
                                                                         value: Any) -> None:
    job = json.loads((CORPUS / "invalid_pool_own_package_module.json").read_text())
    chief, workers = job["jobSpec"]["workerPoolSpecs"]
    workers["pythonPackageSpec"] = {**chief["pythonPackageSpec"], key: value}
    result = interop.to_request(job, region=DEFAULT_REGION)
    messages = result.errors[f"{POOLS}[1].pythonPackageSpec.{key}"]
    assert "differs from the chief's" in messages[0]
    assert list(result.errors) == [f"{POOLS}[1].pythonPackageSpec.{key}"]
