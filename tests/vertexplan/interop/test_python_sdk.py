"""A Python file's SDK job: the constructor's and run()/submit()'s arguments read into the
CustomJob where the SDK puts them, and each one that cannot be read refused on its name."""

from __future__ import annotations

from vertexplan.interop import python_sdk

JOB = ('from google.cloud import aiplatform\n'
       'job = aiplatform.CustomJob(display_name="sdk", worker_pool_specs=[{\n'
       '    "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,\n'
       '    "container_spec": {"image_uri": "gcr.io/p/i:1"}}]{extra})\n')


def read(run: str = "", extra: str = "", before: str = "") -> python_sdk.PythonJob:
    found = python_sdk.read(before + JOB.replace("{extra}", extra) + run)
    assert found is not None
    return found


def test_constructor_arguments_go_where_the_sdk_puts_them() -> None:
    found = read(extra=', labels={"team": "a"}, encryption_spec_key_name="projects/p/'
                       'locations/us-central1/keyRings/r/cryptoKeys/k", '
                       'persistent_resource_id="pool-1", location="europe-west4"')
    assert found.errors == {}
    assert found.document["labels"] == {"team": "a"}
    assert found.document["encryptionSpec"]["kmsKeyName"].endswith("cryptoKeys/k")
    assert found.document["jobSpec"]["persistentResourceId"] == "pool-1"
    assert found.region == "europe-west4"


def test_run_arguments_and_init_defaults_are_read() -> None:
    found = read("job.run(timeout=5400, max_wait_duration=0, scheduling_strategy=4, "
                 "disable_retries=True, persistent_resource_id='pool-2', sync=False)\n",
                 before='import google.cloud.aiplatform as aiplatform\n'
                        'aiplatform.init(location="us-east1", service_account="sa@p.iam")\n')
    spec = found.document["jobSpec"]
    assert spec["scheduling"] == {"timeout": "5400s", "maxWaitDuration": "0s",
                                  "strategy": "SPOT", "disableRetries": True}
    assert spec["persistentResourceId"] == "pool-2"
    assert spec["serviceAccount"] == "sa@p.iam"  # aiplatform.init's, as the SDK uses it
    assert found.region == "us-east1"
    assert found.errors == {}


def test_a_chained_submit_is_read() -> None:
    text = JOB.replace("{extra}", "").replace("job = aiplatform.CustomJob(", "aiplatform."
                                              "CustomJob(").rstrip("\n")
    found = python_sdk.read(text + ".submit(network='projects/1/global/networks/v')\n")
    assert found is not None
    assert found.document["jobSpec"]["network"] == "projects/1/global/networks/v"


def test_what_cannot_be_read_is_refused_on_its_name() -> None:
    found = read("job.run('sa@p.iam', **options)\n"
                 "job.submit(timeout=1.5, experiment='my-exp', machine_type='n1')\n")
    assert set(found.errors) == {"run(...)", "run(**)", "submit(timeout=)",
                                 "submit(experiment=)", "submit(machine_type=)"}
    assert "whole number of seconds" in found.errors["submit(timeout=)"][0]
    assert "resource name" in found.errors["submit(experiment=)"][0]
    assert "jobSpec" in found.document and "scheduling" not in found.document["jobSpec"]


def test_a_staging_bucket_without_an_output_folder_is_said() -> None:
    found = read(extra=', staging_bucket="gs://b"')
    assert found.errors == {}
    assert "baseOutputDirectory" not in found.document["jobSpec"]
    assert any("base_output_dir" in w for w in found.warnings)
