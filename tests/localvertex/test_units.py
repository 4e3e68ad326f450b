"""The pure parts of the emulator, without a server: filters, the GCS mapping, environments,
the store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from localvertex.cloudlogging.entries import ERROR, INFO, WARNING, from_line
from localvertex.cloudlogging.filter import compile_filter
from localvertex.cloudlogging.store import LogStore
from localvertex.config import Settings
from localvertex.core.filters import And, FilterError, Or, comparisons, parse
from localvertex.core.objects import object_store
from localvertex.core.store import Conflict
from localvertex.core.timeutil import format_rfc3339, parse_rfc3339_ns
from localvertex.jobs.filter import compile_job_filter
from localvertex.replicas.environment import build_replicas, expand_references
from localvertex.replicas.storage import local_path


def test_or_binds_tighter_than_and_as_in_google_filters() -> None:
    node = parse('a="1" OR b="2" AND c="3"\nd>=4')
    assert isinstance(node, And)
    assert isinstance(node.terms[0], Or)
    assert [c.field for c in comparisons(node)] == ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    "text",
    ['resource.type="ml_job" AND', "severity>=", "(a=1", "hello", 'a="unterminated'],
)
def test_malformed_filters_are_rejected(text: str) -> None:
    with pytest.raises(FilterError):
        parse(text)


def test_rfc3339_parsing() -> None:
    assert parse_rfc3339_ns("1970-01-01T00:00:01Z") == 1_000_000_000
    assert parse_rfc3339_ns("1970-01-01T00:00:01.5Z") == 1_500_000_000
    assert parse_rfc3339_ns("1970-01-01T01:00:00+01:00") == 0
    assert parse_rfc3339_ns("1970-01-01T00:00:00.000000001Z") == 1
    ns = 1_767_225_600_123_456_789
    assert parse_rfc3339_ns(format_rfc3339(ns)) == ns


def test_log_filter_over_a_store(tmp_path: Path) -> None:
    store = LogStore(tmp_path / "db.sqlite3")
    lines = [
        ("1", "workerpool0-0", "plain text", INFO),
        ("1", "workerpool0-0", '{"severity": "ERROR", "message": "bad", "step": 5}', 200),
        ("2", "workerpool1-0", "on stderr", ERROR),
        ("3", "workerpool0-0", '{"event": "step", "step": 7}', INFO),
    ]
    for i, (job, task, line, severity) in enumerate(lines):
        store.append(
            from_line(
                project="p",
                job_id=job,
                task_name=task,
                line=line,
                default_severity=severity,
                timestamp_ns=1_000 + i,
                insert_id=store.next_insert_id(),
            )
        )
    assert store.flush()

    def count(text: str) -> int:
        page = store.page(["p"], compile_filter(text), descending=False, page_size=100, after=None)
        return len(page.blobs)

    ids = " OR ".join(f'resource.labels.job_id="{n}"' for n in range(1, 400))
    assert count(f'resource.type="ml_job" AND ({ids})') == 4
    assert count('resource.labels.job_id="1" OR resource.labels.job_id="3"') == 3
    assert count("severity>=ERROR") == 2
    assert count('severity>=ERROR resource.labels.task_name="workerpool1-0"') == 1
    assert count('jsonPayload.event="step" AND jsonPayload.step>=7') == 1
    assert count('textPayload:"PLAIN"') == 1
    assert count('NOT resource.labels.job_id="1"') == 2
    assert count('timestamp>"1970-01-01T00:00:00.000001001Z"') == 2
    assert count('timestamp>="1970-01-01T00:00:00.000001001Z"') == 3
    assert count('logName="projects/p/logs/workerpool1-0"') == 1
    assert count("") == 4
    for bad in ('protoPayload.x="1"', "severity>=LOUD", 'timestamp>"yesterday"', "a=~b"):
        with pytest.raises(FilterError):
            compile_filter(bad)
    with pytest.raises(FilterError, match="20000"):
        compile_filter(" " * 20_001)
    store.close()


def test_json_line_lifts_severity_and_keeps_message() -> None:
    entry = from_line(
        project="p",
        job_id="9",
        task_name="workerpool0-0",
        line='{"severity": "warn", "message": "hi", "event": "step"}',
        default_severity=INFO,
        timestamp_ns=1,
        insert_id="1",
    )
    assert entry.severity == WARNING
    assert json.loads(entry.json_payload) == {"message": "hi", "event": "step"}
    assert entry.text_payload is None
    text = from_line(
        project="p",
        job_id="9",
        task_name="workerpool0-0",
        line="[1, 2]",
        default_severity=ERROR,
        timestamp_ns=2,
        insert_id="2",
    )
    assert (text.severity, text.text_payload, text.json_payload) == (500, "[1, 2]", None)


def test_job_filter() -> None:
    job = aiplatform_v1.CustomJob.pb()(
        display_name="cp-42-a1",
        labels={"cp-job": "42", "cp-team": "vision"},
        state=aiplatform_v1.JobState.JOB_STATE_RUNNING,
    )
    assert compile_job_filter('labels.cp-job="42" AND state="JOB_STATE_RUNNING"')(job)
    assert compile_job_filter("labels.cp-job=42 AND state=JOB_STATE_RUNNING")(job)
    assert compile_job_filter('display_name="cp-42-a1"')(job)
    assert compile_job_filter('display_name:"cp-42-*"')(job)
    assert not compile_job_filter('labels.cp-team="nlp" OR display_name="x"')(job)
    assert compile_job_filter("labels.cp-team:*")(job)
    with pytest.raises(FilterError):
        compile_job_filter("state=JOB_STATE_SLEEPING")
    with pytest.raises(FilterError):
        compile_job_filter('color="red"')


def test_gcs_uris_map_to_local_folders(tmp_path: Path) -> None:
    root = tmp_path.absolute()
    assert local_path(root, "gs://bucket/runs/1/") == f"{root}/gcs/bucket/runs/1/"
    assert local_path(root, "gs://bucket") == f"{root}/gcs/bucket"
    assert local_path(root, "/gcs/bucket/x") == f"{root}/gcs/bucket/x"
    assert local_path(root, "/already/local") == "/already/local"
    assert local_path(root, "file:///already/local/") == "/already/local/"
    with pytest.raises(ValueError):
        local_path(root, "gs://bucket/../../etc")


def test_env_references_expand_and_escape() -> None:
    env = {"JOB": "7"}
    assert expand_references("$(JOB)-x", env) == "7-x"
    assert expand_references("$$(JOB)", env) == "$(JOB)"
    assert expand_references("$(MISSING)", env) == "$(MISSING)"


def test_replicas_environment(tmp_path: Path) -> None:
    spec = aiplatform_v1.CustomJobSpec.pb()(
        worker_pool_specs=[
            {"replica_count": 1, "container_spec": {"command": ["python3", "-c", "pass"]}},
            {"replica_count": 2, "container_spec": {"command": ["python", "x.py"]}},
            {"replica_count": 1, "python_package_spec": {"python_module": "a.b", "args": ["-v"]}},
        ],
        base_output_directory={"output_uri_prefix": "gs://bkt/run"},
    )
    settings = Settings(data_dir=tmp_path)
    replicas = build_replicas(
        settings=settings, project="p", job_id="5", job_spec=spec, base_env={"RANK": "9"}
    )
    assert [r.task_name for r in replicas] == [
        "workerpool0-0", "workerpool1-0", "workerpool1-1", "workerpool2-0",
    ]  # fmt: skip
    assert len({r.port for r in replicas}) == 4
    assert [r.env.get("RANK") for r in replicas] == ["0", "1", "2", None]
    assert {r.env["WORLD_SIZE"] for r in replicas} == {"3"}
    assert {r.env["MASTER_PORT"] for r in replicas} == {str(replicas[0].port)}
    assert replicas[0].argv[0] == sys.executable
    assert replicas[3].argv == [sys.executable, "-m", "a.b", "-v"]
    tf = json.loads(replicas[3].env["TF_CONFIG"])
    assert tf["task"] == {"type": "ps", "index": 0}
    assert set(tf["cluster"]) == {"chief", "worker", "ps"}
    assert replicas[1].env["AIP_MODEL_DIR"] == f"{tmp_path.absolute()}/gcs/bkt/run/model/"


def test_kinds_sharing_a_table_keep_apart_in_creation_order(tmp_path: Path) -> None:
    db = tmp_path / "state.sqlite3"
    models = object_store(db, "model", aiplatform_v1.Model.pb())
    endpoints = object_store(db, "endpoint", aiplatform_v1.Endpoint.pb())
    parent = "projects/p/locations/us-central1"
    for name in ("b", "a"):
        models.insert(aiplatform_v1.Model.pb()(name=f"{parent}/models/{name}"))
    endpoints.insert(aiplatform_v1.Endpoint.pb()(name=f"{parent}/endpoints/1"))
    models.insert(aiplatform_v1.Model.pb()(name="projects/q/locations/us-central1/models/c"))
    with pytest.raises(Conflict):
        models.insert(aiplatform_v1.Model.pb()(name=f"{parent}/models/a"))
    assert [m.name.rsplit("/", 1)[1] for m in models.select("parent = ?", (parent,))] == [
        "b", "a"]
    assert models.get(f"{parent}/endpoints/1") is None
    models.update(f"{parent}/models/a", lambda m: setattr(m, "display_name", "A"))
    with pytest.raises(KeyError):
        models.update(f"{parent}/models/gone", lambda m: None)
    models.close()
    endpoints.close()
    # An emulator started again finds every row where it was, in the same order.
    again = object_store(db, "model", aiplatform_v1.Model.pb())
    assert [m.display_name for m in again.select()] == ["", "A", ""]
    again.delete(f"{parent}/models/b")
    assert [m.name.rsplit("/", 1)[1] for m in again.select()] == ["a", "c"]
