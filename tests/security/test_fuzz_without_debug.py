"""The API with DEBUG off, as production runs it: schemathesis' generated requests for every
operation plus the hostile payloads that once made server errors (impossible dates, huge
numbers, deep JSON, YAML aliases, control characters). At least 5,000 requests; not one
answer may be a server error. In-process (WSGI), on pytest-django's database."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from django.test import Client
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as examples
from schemathesis.checks import not_a_server_error

from controlplane.security import tokens
from tests.security.test_bounded_input import ALIAS_BOMB
from tests.security.test_roles_matrix import build_world
from tests.security.test_schema_fuzz import quiet, real_ids  # noqa: F401 - the fixture

# Left out of `make test-fast` (the inner loop): thousands of generated requests.
pytestmark = pytest.mark.slow

MINIMUM_REQUESTS = 5000
# Generated requests per operation (over 60 operations); CP_FUZZ_EXAMPLES raises it.
EXAMPLES_PER_OPERATION = int(os.environ.get("CP_FUZZ_EXAMPLES", "30"))
MAX_ROUNDS = 4
DEEP = "[" * 400 + "]" * 400
HUGE = "9" * 40


def hostile_requests(job: int, team: str) -> list[tuple[str, str, Any, str]]:
    """(method, path, body, content type) of every payload the hostile team tried."""
    gets = [f"/api/v1/jobs/?created_after={d}" for d in (
        "2026-02-31", "2026-13-01", "0000-01-01", "9999-12-31T23:59:59-23:59",
        "0001-01-01T00:00:00+23:59", "2026-01-01T25:61:61Z", "x" * 5000, HUGE)]
    gets += [f"/api/v1/jobs/?created_before={d}" for d in ("2026-02-30", "-1", HUGE)]
    gets += [f"/api/v1/teams/{team}/audit/?since={d}" for d in ("2026-02-31T00:00:00Z", HUGE)]
    gets += [f"/api/v1/teams/{team}/audit/?until=99999-01-01"]
    gets += [f"/api/v1/jobs/{job}/logs/?after={a}" for a in (
        "2026-02-31T00:00:00Z,a", f"{HUGE},x", ",", "9999-12-31T23:59:59-23:59,z" * 3)]
    gets += [f"/api/v1/jobs/{job}/logs/?attempt={HUGE}", f"/api/v1/jobs/{job}/logs/?severity="
             f"{HUGE}", f"/api/v1/jobs/{job}/metrics/?attempt={HUGE}",
             f"/api/v1/jobs/{job}/metrics/?max_points={HUGE}"]
    gets += [f"/api/v1/serving/models/?job={j}" for j in (HUGE, "-1", "%C2%B2", "1e9", "0x10")]
    gets += [f"/api/v1/jobs/{HUGE}/", f"/api/v1/jobs/{HUGE}/logs/", f"/api/v1/tokens/{HUGE}/",
             f"/api/v1/serving/endpoints/{HUGE}/latency/?minutes={HUGE}"]
    job_body = {"team": team, "name": "x", "chief": {"machine_type": "n1-standard-4"}}
    posts: list[tuple[str, str, Any, str]] = [
        ("post", "/api/v1/jobs/", json.dumps({**job_body, "scheduling_strategy": "FLEX_START",
                                               "max_wait_hours": 1e308}), "application/json"),
        ("post", "/api/v1/jobs/", json.dumps({**job_body, "timeout_hours": 1e308}),
         "application/json"),
        ("post", "/api/v1/jobs/", json.dumps(job_body)[:-1] + ', "job_spec_extra": {"a": 1e400}}',
         "application/json"),
        ("post", "/api/v1/jobs/validate/", json.dumps(job_body)[:-1] + ', "x": NaN}',
         "application/json"),
        ("post", "/api/v1/jobs/", '{"job_spec_extra": ' + DEEP + "}", "application/json"),
        ("post", "/api/v1/jobs/validate/", DEEP, "application/json"),
        ("post", "/api/v1/jobs/import/", ALIAS_BOMB, "application/yaml"),
        ("post", "/api/v1/jobs/import/", "a: " + DEEP, "application/yaml"),
        ("post", "/api/v1/jobs/import/", json.dumps({"text": ALIAS_BOMB}), "application/json"),
        ("post", "/api/v1/jobs/", json.dumps({**job_body, "name": "a\nserviceAccount: x@y.z"}),
         "application/json"),
        ("post", "/api/v1/jobs/export/?fmt=python", json.dumps(
            {**job_body, "name": '"""; __import__("os").system("id"); """'}),
         "application/json"),
        ("post", "/api/v1/tokens/", json.dumps({"name": "t", "expires_at": "2026-02-31"}),
         "application/json"),
        ("post", f"/api/v1/teams/{team}/channels/", json.dumps({
            "name": "x", "kind": "webhook", "notify_on": ["failed"],
            "webhook_url": "https://hooks.slack.com/services/T0/B0/abcdefghijk\r\nX: y"}),
         "application/json"),
        ("patch", f"/api/v1/teams/{team}/policy/", json.dumps(
            {"output_prefix": "gs://b/../../x", "service_accounts": ["a\n@b.c"]}),
         "application/json"),
        ("post", "/api/v1/jobs/", "x" * 2_000_000, "application/json"),
        ("post", "/api/v1/jobs/", b"\xff\xfe\x00".decode("latin-1"), "application/json"),
    ]
    return [("get", path, None, "") for path in gets] + posts


def fuzz(operation: Any, real: dict[str, Any], headers: dict[str, str],
         counter: list[int]) -> None:
    """Generated requests for one operation; every other one names the team's real objects."""

    @given(case=operation.as_strategy())
    @examples(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def run(case: Any) -> None:
        if counter[0] % 2 == 0 and case.path_parameters:
            case.path_parameters = {k: real.get(k, v) for k, v in case.path_parameters.items()}
        response = case.call(headers=headers)
        counter[0] += 1
        case.validate_response(response, checks=[not_a_server_error])

    run()


def test_no_server_error_with_debug_off(db: None, quiet: None, settings: Any,  # noqa: F811
                                        checkpoint_storage: Any) -> None:
    settings.DEBUG = False
    world = build_world(checkpoint_storage)
    spare = tokens.create(world.users["admin"], "spare").token.pk
    key = world.objects["tokens"]["admin"].key
    logging.getLogger("django.request").setLevel(logging.CRITICAL)
    sent, failures = 0, []

    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())
    headers = {"Authorization": f"Token {key}"}
    counter = [sent]
    operations = [result.ok() for result in schema.get_all_operations()]
    failed: set[str] = set()
    # Rounds of fresh examples until the count is reached (an operation with few inputs has
    # few distinct examples per round); bounded, so the test takes minutes, not more.
    for _ in range(MAX_ROUNDS):
        for operation in operations:
            label = f"{operation.method.upper()} {operation.path}"
            if label in failed:
                continue
            try:
                fuzz(operation, real_ids(operation.path, world, spare), headers, counter)
            except (Exception, BaseExceptionGroup) as exc:
                failed.add(label)
                failures.append(f"{label}: {exc}"[:3000])
        if counter[0] >= MINIMUM_REQUESTS:
            break
    sent = counter[0]

    # Last: Django's test client reconnects the signal that closes the database connection
    # after each request, which the in-process WSGI calls above must not meet.
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    job = world.objects["job"].pk
    for method, path, body, content_type in hostile_requests(job, world.team.slug):
        kwargs = {"data": body, "content_type": content_type} if body is not None else {}
        answer = getattr(client, method)(path, **kwargs)
        sent += 1
        if answer.status_code >= 500:
            failures.append(f"{method.upper()} {path[:120]}: {answer.status_code}")

    print(f"schemathesis with DEBUG off: {sent} requests")
    assert not failures, "\n\n".join(failures)
    assert sent >= MINIMUM_REQUESTS, sent
