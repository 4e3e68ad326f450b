"""Exports are data, not code: a hostile job name never runs in the Python export and never
adds keys to the YAML export; names with control characters are refused."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from tests.runs.pages.conftest import CPU_CUSTOM_JOB, CPU_REQUEST
from tests.security.conftest import World
from vertexplan import composer, interop

INJECTIONS = [
    '"""; __import__("os").system("touch /tmp/pwned"); """',
    "'''; __import__('os').system('id'); '''",
    "\\\"\"\" + __import__('os').getcwd() + \"\"\"",
]


def _names_called(source: str) -> set[str]:
    tree = ast.parse(source)
    return {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}


@pytest.mark.parametrize("name", INJECTIONS)
def test_python_export_holds_the_name_as_a_literal(name: str) -> None:
    job = {**CPU_CUSTOM_JOB, "displayName": name}
    source = interop.to_python(job, region="us-central1", project="p")
    tree = ast.parse(source)
    assigned = {node.targets[0].id: node.value for node in tree.body
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    assert ast.literal_eval(assigned["DISPLAY_NAME"]) == name
    assert ast.literal_eval(assigned["CUSTOM_JOB"])["displayName"] == name
    # Only the snippet's own calls: nothing the name brought.
    assert not any("import" in call or "system" in call for call in _names_called(source))


@pytest.mark.parametrize("name", [
    "x\nserviceAccount: attacker@evil.iam.gserviceaccount.com",
    "x\rserviceAccount: attacker@evil.iam.gserviceaccount.com",
    "x\u2028serviceAccount: attacker@evil.iam.gserviceaccount.com",
    "x\x85serviceAccount: a@b.c",
])
def test_yaml_export_keeps_a_hostile_name_on_its_comment_line(name: str) -> None:
    job = {**CPU_CUSTOM_JOB, "displayName": name}
    text = interop.to_yaml(job, region="us-central1")
    parsed, _, _ = interop.parse(text)
    assert "serviceAccount" not in parsed["jobSpec"]
    assert parsed["jobSpec"] == CPU_CUSTOM_JOB["jobSpec"]


@pytest.mark.parametrize("name", ["two\nlines", "tab\there", "bell\x07", "sep\u2029x"])
def test_names_with_control_characters_are_refused(name: str) -> None:
    composition = composer.compose(composer.JobRequest.from_dict({**CPU_REQUEST, "name": name}))
    assert "control characters" in " ".join(composition.errors["name"])


def test_api_refuses_the_name_and_exports_stored_jobs_safely(
        world: World, token_client: Callable[[Any], APIClient],
        make_job: Callable[..., Job]) -> None:
    member = token_client(world.users["member"])
    answer = member.post("/api/v1/jobs/", {
        **CPU_REQUEST, "team": "vision",
        "name": "x\nserviceAccount: attacker@evil.iam.gserviceaccount.com"}, format="json")
    assert answer.status_code == 400
    assert "control characters" in str(answer.json())
    assert not Job.objects.exists()
    # A job stored before names were checked still exports as data.
    job = make_job(world.team, world.users["member"], name=INJECTIONS[0])
    job.custom_job = {**CPU_CUSTOM_JOB, "displayName": "a\nserviceAccount: x@y.z"}
    job.save(update_fields=["custom_job"])
    viewer = token_client(world.users["viewer"])
    yaml_text = viewer.get(f"/api/v1/jobs/{job.pk}/export/?fmt=yaml").content.decode()
    imported = viewer.post("/api/v1/jobs/import/", yaml_text, content_type="application/yaml")
    assert imported.status_code == 200
    assert "service_account" not in imported.json()["request"] or not imported.json()[
        "request"]["service_account"]
    job.custom_job = {**CPU_CUSTOM_JOB, "displayName": INJECTIONS[0]}
    job.save(update_fields=["custom_job"])
    source = viewer.get(f"/api/v1/jobs/{job.pk}/export/?fmt=python").content.decode()
    assert not any("system" in call for call in _names_called(source))
