"""schemathesis against the app's own OpenAPI schema: requests generated from /api/schema/ for
every operation, as a token-holding admin of a team with a job, a template, a channel and an
endpoint. No answer may be a server error, and every answer must match the schema (its
content type and, for the documented statuses, its body).

Runs in-process through the WSGI application, on pytest-django's database, so the requests
it makes (jobs created, channels changed) are rolled back with the test.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from celery.app.task import Task
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from controlplane.backends import serving_base
from controlplane.security import tokens
from tests.security.test_roles_matrix import PK_OWNERS, World, build_world

# Left out of `make test-fast` (the inner loop): a thousand generated requests and more.
pytestmark = pytest.mark.slow

# Requests per operation; with ~50 operations this is well over the 1000 asked for.
EXAMPLES_PER_OPERATION = 15
MINIMUM_REQUESTS = 1000
CHECKS = [not_a_server_error, content_type_conformance, response_schema_conformance]


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[None]:
    """No broker, no cloud, no rate limit: the answers are the app's own."""
    monkeypatch.setattr(Task, "apply_async", lambda self, *a, **k: None)
    monkeypatch.setattr(Task, "delay", lambda self, *a, **k: None)
    monkeypatch.setattr(Task, "apply_async", lambda self, *a, **k: None)
    settings.CP_BACKEND = "tests.fakes.FakeBackend"
    settings.CP_SERVING_BACKEND = "tests.serving.fakes.FakeServing"
    settings.CP_API_RATE_USER = ""
    settings.CP_API_RATE_ANON = ""
    from controlplane.backends import base

    base.get_backend.cache_clear()
    serving_base.get_serving_backend.cache_clear()
    # As Django's test client does: a request must not close the test's database connection.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
        base.get_backend.cache_clear()
        serving_base.get_serving_backend.cache_clear()


def real_ids(path: str, world: World, token_pk: int) -> dict[str, Any]:
    """Path parameters that name the team's own objects, so the generated queries and bodies
    reach the code behind the 404."""
    values: dict[str, Any] = {"team": world.team.slug}
    if "{id}" in path:
        before = path.split("{id}")[0].lstrip("/")
        owner = next((o for p, o in PK_OWNERS if before.endswith(p)), None)
        assert owner, f"{path}: which object does {{id}} name? Add it to PK_OWNERS"
        values["id"] = token_pk if owner == "token" else world.objects[owner].pk
    return values


def test_schema_fuzz(db: None, quiet: None, checkpoint_storage: Any) -> None:
    world = build_world(checkpoint_storage)
    # A token of the caller's to revoke: not the one the requests carry.
    spare = tokens.create(world.users["admin"], "spare").token.pk
    # identity: the WSGI transport hands schemathesis the body as sent, and the API gzips JSON
    # for a client that accepts it (tests/core/test_json_compression.py checks that path).
    headers = {"Authorization": f"Token {world.objects['tokens']['admin'].key}",
               "Accept-Encoding": "identity"}
    app = get_wsgi_application()
    # Hundreds of expected 400s and 404s would bury a real failure in the log.
    logging.getLogger("django.request").setLevel(logging.ERROR)
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", app)
    sent = 0
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 40

    def runner(operation: Any) -> Any:
        real = real_ids(operation.path, world, spare)

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            nonlocal sent
            if sent % 2 == 0 and case.path_parameters:
                # Every other request names a real object; the others keep the generated ids.
                case.path_parameters = {k: real.get(k, v)
                                        for k, v in case.path_parameters.items()}
            response = case.call(headers=headers)
            sent += 1
            case.validate_response(response, checks=CHECKS)

        return run

    for operation in operations:
        try:
            runner(operation)()
        except (Exception, BaseExceptionGroup) as exc:  # report every operation's failure
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}"[:3000])

    print(f"schemathesis: {sent} requests over {len(operations)} operations")
    assert not failures, "\n\n".join(failures)
    assert sent >= MINIMUM_REQUESTS, sent
