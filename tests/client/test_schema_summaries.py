"""Every operation in the served schema has a short summary, as Swagger UI lists it."""

from __future__ import annotations

from typing import Any

from django.test import Client

from controlplane.core.openapi_summaries import SUMMARIES

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def _operations(client: Client) -> list[tuple[str, str, dict[str, Any]]]:
    served = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    return [(path, method, operation) for path, item in served["paths"].items()
            for method, operation in item.items() if method in METHODS]


def test_every_operation_has_a_short_unique_summary(client: Client, db: None) -> None:
    """A one-line summary (the description stays the docstring), under 80 characters, none
    shared by two operations: a new view without one fails here
    (controlplane/core/openapi_summaries.py)."""
    operations = _operations(client)
    assert operations
    missing = [f"{m.upper()} {p} ({o['operationId']})" for p, m, o in operations
               if not (o.get("summary") or "").strip()]
    assert not missing, f"no summary (add it to openapi_summaries.SUMMARIES): {missing}"
    for path, method, operation in operations:
        summary = operation["summary"]
        assert len(summary) <= 80 and "\n" not in summary, (method, path, summary)
        assert summary == summary.strip() and not summary.endswith("."), (method, path)
    seen: dict[str, str] = {}
    for path, method, operation in operations:
        where = f"{method.upper()} {path}"
        assert operation["summary"] not in seen, (where, seen.get(operation["summary"]))
        seen[operation["summary"]] = where


def test_the_summaries_name_only_operations_that_exist(client: Client, db: None) -> None:
    """A renamed or removed operation takes its summary with it."""
    ids = {operation["operationId"] for _, _, operation in _operations(client)}
    assert set(SUMMARIES) <= ids, sorted(set(SUMMARIES) - ids)


def test_descriptions_are_kept(client: Client, db: None) -> None:
    """The summary is added beside the docstring's description, not instead of it."""
    by_id = {o["operationId"]: o for _, _, o in _operations(client)}
    assert by_id["jobs_create"]["summary"] == "Create a job"
    assert by_id["jobs_create"]["description"].startswith("Create a job from the form's")
    assert by_id["jobs_cancel_create"]["summary"] == "Cancel a job"
