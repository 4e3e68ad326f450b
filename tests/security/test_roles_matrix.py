"""Every route, every role: who may do what, walked from the URL resolver.

Routes are enumerated from the resolver, so a route added later is walked too. For each route
and method, five callers try it against objects of team Vision: nobody (anonymous), a viewer,
a member and an admin of Vision, and an admin of another team (the outsider). The rules:

- anonymous: the API answers 401, a page redirects to the login (a few routes are public);
- the outsider: 404 for every route that names a Vision object (ids leak nothing); on routes
  that name none, the outsider acts in their own team, where they are admin;
- within Vision: a route needs viewer (reads), member (compose, submit, cancel, serving)
  or admin (members, channels, budgets, templates, audit log); a lower role gets 403;
- a refused request changes nothing in the database, and neither does a GET.

Each caller's request runs in a savepoint that is rolled back, so every caller finds the same
objects. The matrix is written to test-artifacts/roles-matrix.txt.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from celery.app.task import Task
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.backends import serving_base
from controlplane.clusters.models import Cluster, RayJob
from controlplane.compose.models import JobTemplate
from controlplane.notifications.models import SlackChannel
from controlplane.runs.models import Job, JobState
from controlplane.security import tokens
from controlplane.security.models import ApiToken
from controlplane.serving.models import Deployment, Endpoint, ModelEntry, Slo
from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Membership, Role, Team
from tests.people import make_user
from tests.runs.pages.conftest import CPU_CUSTOM_JOB, CPU_REQUEST
from tests.sweeps.conftest import sweep_body
from vertexplan.clusters.compose import compose_persistent_resource
from vertexplan.sweeps import compose_sweep, export

# Left out of `make test-fast` (the inner loop): every route for every role.
pytestmark = pytest.mark.slow

SWEEP_REQUEST = sweep_body()
SWEEP_TUNING_JOB = compose_sweep(SWEEP_REQUEST).tuning_job
CLUSTER_REQUEST = {
    "name": "ray-m",
    "pools": [{"id": "head", "machine_type": "n1-standard-4"},
              {"id": "workers", "machine_type": "n1-standard-8", "replica_count": 2}],
    "ray": {"version": "2.47.1"},
}
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# "site": the site's admins only (none of the callers; tests/runs/test_admission.py has one).
RANK = {"anyone": -1, "user": 0, "viewer": 1, "member": 2, "admin": 3, "site": 4}
CALLERS = ("anonymous", "outsider", "viewer", "member", "admin")
METHODS = ("get", "post", "put", "patch", "delete")
# Django's own admin site has its own (staff) login; it is checked apart.
SKIPPED_PREFIXES = ("admin/",)


# --- the routes ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Route:
    route: str          # e.g. "api/v1/jobs/<int:pk>/cancel/"
    name: str
    callback: Any

    @property
    def api(self) -> bool:
        return self.route.startswith("api/")


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[Route]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield Route(prefix + str(entry.pattern), entry.name or "", entry.callback)


# Routes that answer a JSON 404 to anyone, with no object and no role to check: the API's
# fallback (tests/core/test_api_fallback.py) and OpenAI's paths under an id that is no
# endpoint's (tests/serving/test_openai_routes.py).
NOT_WALKED = frozenset({"api-not-found", "api-serving-openai-unknown"})


def all_routes() -> list[Route]:
    seen: dict[str, Route] = {}
    for route in _walk(get_resolver().url_patterns):
        if not route.route.startswith(SKIPPED_PREFIXES) and route.name not in NOT_WALKED:
            seen.setdefault(route.route, route)
    return list(seen.values())


ROUTES = all_routes()


def declared_methods(route: Route) -> list[str] | None:
    """The methods a class-based view handles; None for a function (probed instead)."""
    view = getattr(route.callback, "cls", None) or getattr(route.callback, "view_class", None)
    if view is None:
        return None
    return [m for m in METHODS if hasattr(view, m)]


# --- the policy ------------------------------------------------------------------------------

# Who may call a route, where it differs from the default: GET needs a viewer's role, any
# other method a member's. "anyone" needs no login; "user" any login (the caller's own objects).
PUBLIC = {"login", "logout", "healthz", "api-schema", "api-docs", "admin-login",
          "password_reset", "password_reset_done", "password_reset_confirm",
          "password_reset_complete"}
POLICY: dict[tuple[str, str], str] = {
    # Reading a CustomJob document names no team: anyone may. (Validate, export and estimate
    # check the job for a named team, which takes a role that can submit there.)
    ("api-job-import", "post"): "viewer", ("api-sweep-import", "post"): "viewer",
    ("sweep-new", "get"): "member", ("sweep-compose", "get"): "member",
    # The compose pages are for those who can submit.
    ("job-compose", "get"): "member", ("job-validate", "post"): "member",
    ("job-export-form", "post"): "member", ("job-import", "get"): "member",
    ("job-import", "post"): "member",
    ("clusters-create", "get"): "member",
    # Slack channels and the audit log belong to the team's admins.
    ("api-channel-list", "post"): "admin", ("api-channel-detail", "put"): "admin",
    ("api-channel-detail", "patch"): "admin", ("api-channel-detail", "delete"): "admin",
    ("notification-channels", "post"): "admin", ("notification-channel-edit", "get"): "admin",
    ("notification-channel-edit", "post"): "admin",
    ("notification-channel-delete", "post"): "admin",
    ("api-team-audit", "get"): "admin", ("team-audit", "get"): "admin",
    # So do budgets (members read them).
    ("api-team-budget", "put"): "admin", ("api-team-budget", "delete"): "admin",
    ("team-costs", "post"): "admin",
    # Templates, and who is in the team, are the admins' to change (members use templates).
    ("api-template-list", "post"): "admin", ("api-template-detail", "delete"): "admin",
    ("template-save", "post"): "admin", ("template-delete", "post"): "admin",
    ("api-member-list", "post"): "admin", ("api-member-detail", "patch"): "admin",
    ("api-member-detail", "delete"): "admin", ("team-members", "post"): "admin",
    # What a team's jobs may use (members read it).
    ("api-team-policy", "patch"): "admin",
    # Its share of the project's accelerators: its admins read it, the site's admins set it.
    ("api-team-quotas", "get"): "admin", ("api-team-quotas", "put"): "site",
    # Where its jobs log runs, and the key they log with (members read all but the key).
    ("api-team-tracking", "patch"): "admin", ("team-tracking", "post"): "admin",
    # Tokens are the caller's own.
    ("api-token-list", "get"): "user", ("api-token-list", "post"): "user",
    ("api-token-detail", "get"): "user", ("api-token-detail", "delete"): "user",
    ("token-list", "get"): "user", ("token-list", "post"): "user",
    ("token-revoke", "post"): "user",
    # One's own password.
    ("password_change", "get"): "user", ("password_change", "post"): "user",
    ("password_change", "put"): "user", ("password_change_done", "get"): "user",
}

# How a refusal reads where it is not a 403: the serving forms offer a viewer no team or job
# to choose, so the form is invalid and the page redirects back with the error, changing nothing.
REFUSED_AS: dict[tuple[str, str], int] = {
    ("serving-endpoint-create", "post"): 302,
    ("serving-model-register", "post"): 302,
}


def required(route: Route, method: str) -> str:
    if route.name in PUBLIC:
        return "anyone"
    return POLICY.get((route.name, method), "viewer" if method == "get" else "member")


# --- the world -------------------------------------------------------------------------------

@dataclass
class World:
    team: Team
    other: Team
    users: dict[str, Any]
    objects: dict[str, Any] = field(default_factory=dict)
    clients: dict[tuple[str, bool], Any] = field(default_factory=dict)


def build_world(checkpoint_storage: Callable[[str], str]) -> World:
    team = Team.objects.create(name="Vision", slug="vision")
    other = Team.objects.create(name="Speech", slug="speech")
    users = {"viewer": make_user("vic", team, Role.VIEWER),
             "member": make_user("ann", team, Role.MEMBER),
             "admin": make_user("ada", team, Role.ADMIN),
             "outsider": make_user("oscar", other, Role.ADMIN)}
    admin = users["admin"]
    job = Job.objects.create(team=team, created_by=admin, name="exp", request=CPU_REQUEST,
                             custom_job=CPU_CUSTOM_JOB, project="p", region="us-central1",
                             state=JobState.RUNNING)
    job.events.create(kind="checkpoint_saved", attempt=1, step=50,
                      data={"step": 50, "path": checkpoint_storage("gs://b/exp/step-00000050")})
    template = JobTemplate.objects.create(team=team, name="base", request=CPU_REQUEST,
                                          created_by=admin)
    channel = SlackChannel(team=team, name="ops", kind="webhook", notify_on=["failed"])
    channel.set_secret("https://hooks.slack.com/services/T000/B000/secretsecretsecret")
    channel.save()
    entry = ModelEntry.objects.create(team=team, job=job, created_by=admin, display_name="m",
                                      step=50, artifact_uri="gs://b/exp/step-00000050",
                                      image_uri="img", state=ModelEntry.State.READY,
                                      vertex_name="projects/p/locations/l/models/1")
    serving = serving_base.get_serving_backend()
    serving.create_endpoint("1", "ep", {})
    endpoint = Endpoint.objects.create(team=team, created_by=admin, name="ep",
                                       state=Endpoint.State.READY,
                                       vertex_name=serving.endpoint_name("1"))
    Slo.objects.create(endpoint=endpoint, p95_ms=100)
    deployment = Deployment.objects.create(endpoint=endpoint, model_entry=entry,
                                           created_by=admin, machine_type="n1-standard-4",
                                           state=Deployment.State.DEPLOYED,
                                           deployed_at=timezone.now())
    sweep = Sweep.objects.create(team=team, created_by=admin, name="lr", request=SWEEP_REQUEST,
                                 tuning_job=SWEEP_TUNING_JOB, project="p",
                                 region="us-central1", metric_id="val_loss", goal="MINIMIZE")
    sweep.trials.create(trial_id="1", number=1, state="SUCCEEDED", parameters={"lr": 0.001},
                        final_metrics={"val_loss": 2.5}, final_step=4)
    cluster = Cluster.objects.create(
        team=team, created_by=admin, name="ray-m", region="us-central1",
        request=CLUSTER_REQUEST,
        resource=compose_persistent_resource({**CLUSTER_REQUEST, "resource_id": "cp-cl-1"},
                                             "us-central1").resource,
        ray_version="2.47.1", state=Cluster.State.RUNNING, running_since=timezone.now(),
        vertex_name="projects/p/locations/us-central1/persistentResources/cp-cl-1")
    ray_job = RayJob.objects.create(team=team, cluster=cluster, created_by=admin,
                                    entrypoint=["python", "-c", "print(1)"],
                                    state=RayJob.State.RUNNING)
    world = World(team=team, other=other, users=users)
    # Someone in no team yet, for the admins to add.
    get_user_model().objects.create_user(username="nina")
    world.objects = {"job": job, "sweep": sweep, "cluster": cluster, "ray_job": ray_job,
                     "template": template, "channel": channel,
                     "model": entry,
                     "endpoint": endpoint, "deployment": deployment,
                     "membership": Membership.objects.get(team=team, user=users["member"])}
    # Each caller has a token of their own (for the API and the token routes).
    world.objects["tokens"] = {name: tokens.create(user, "matrix") for name, user in
                               users.items()}
    return world


# Which object a route's <int:pk> names, by the path before it.
PK_OWNERS = (
    ("serving/endpoints/", "endpoint"), ("serving/deployments/", "deployment"),
    ("serving/models/", "model"), ("serving/jobs/", "job"), ("templates/", "template"),
    ("channels/", "channel"), ("notifications/", "channel"), ("tokens/", "token"),
    ("members/", "membership"),
    # Before "jobs/": a Ray job's path ends with it too.
    ("ray-jobs/", "ray_job"), ("jobs/", "job"), ("sweeps/", "sweep"), ("clusters/", "cluster"),
)
SLUGS = {"name": "logs", "fmt": "yaml", "uidb64": "MQ", "token": "not-a-reset-token"}


@dataclass(frozen=True)
class Target:
    url: str
    names_object: bool  # a Vision object (or the team) is in the URL


# Routes whose body names a Vision object (the outsider gets 404 for it, as for a URL).
BODY_NAMES_OBJECT = {("api-serving-models", "post"), ("api-ray-jobs", "post")}


def target(route: Route, world: World, caller: str, method: str = "get") -> Target:
    url, names_object = route.route, (route.name, method) in BODY_NAMES_OBJECT
    if "<int:pk>" in url:
        before = url.split("<int:pk>")[0]
        owner = next((o for p, o in PK_OWNERS if before.endswith(p)), None)
        assert owner, (f"{route.route}: which object does <int:pk> name? Add it to PK_OWNERS "
                       "and build one in build_world")
        if owner == "token":
            # The caller's own token; someone else's is a 404 (tests/security/test_tokens.py).
            token = world.objects["tokens"].get(caller) or world.objects["tokens"]["admin"]
            pk = token.token.pk
        else:
            pk = world.objects[owner].pk
            names_object = True
        url = url.replace("<int:pk>", str(pk))
    if "<slug:team>" in url:
        url = url.replace("<slug:team>", world.team.slug)
        names_object = True
    for slug, value in SLUGS.items():
        url = url.replace(f"<slug:{slug}>", value).replace(f"<{slug}>", value)
    assert "<" not in url, f"{route.route}: no value for a part of this route; add it to SLUGS"
    return Target("/" + url, names_object)


def body(route: Route, method: str, world: World, caller: str) -> dict[str, Any]:
    """A body that passes validation, so the answer shows the permission check."""
    team = world.other.slug if caller == "outsider" else world.team.slug
    job, entry = world.objects["job"], world.objects["model"]
    api_job = {"name": "matrix", "team": team, "chief": {"machine_type": "n1-standard-4"},
               "args": ["--preset", "tiny"]}
    form_job = {"name": "matrix", "team": team, "strategy": "ddp",
                "chief_machine_type": "n1-standard-4", "chief_boot_disk_type": "pd-ssd",
                "chief_boot_disk_size_gb": "100", "args": "--preset tiny"}
    sweep_form = {**{k: v for k, v in form_job.items() if k != "name"},
                  "display_name": "matrix", "metric_id": "val_loss", "goal": "MINIMIZE",
                  "algorithm": "RANDOM_SEARCH", "max_trial_count": "2",
                  "parallel_trial_count": "1", "max_failed_trial_count": "0",
                  "idempotency_key": f"matrix-{caller}", "action": "submit",
                  "parameters-TOTAL_FORMS": "1", "parameters-INITIAL_FORMS": "0",
                  "parameters-0-parameter_id": "lr", "parameters-0-type": "DOUBLE",
                  "parameters-0-min_value": "0.001", "parameters-0-max_value": "0.1"}
    bodies: dict[str, dict[str, Any]] = {
        "api-job-list": api_job, "api-job-validate": api_job, "api-job-export": api_job,
        "api-job-estimate": {**api_job, "hours": 1},
        "api-job-import": {"text": "workerPoolSpecs:\n- machineSpec: {machineType: "
                                   "n1-standard-4}\n  replicaCount: 1\n  containerSpec: "
                                   "{imageUri: img}\n"},
        "api-job-resubmit": {"checkpoint_step": 50},
        "api-sweep-list": {**SWEEP_REQUEST, "team": team},
        "api-sweep-validate": {**SWEEP_REQUEST, "team": team},
        "api-sweep-import": {"text": export(SWEEP_TUNING_JOB, "yaml", region="us-central1")},
        "sweep-new": {"team": team, "body": json.dumps(SWEEP_REQUEST)},
        "sweep-compose": sweep_form, "sweep-compose-validate": sweep_form,
        "api-clusters": {**CLUSTER_REQUEST, "name": "ray-n", "team": team},
        "api-cluster": {"replicas": {"workers": 1}},
        "clusters-create": {"team": team, "name": "ray-n", "ray_version": "2.47.1",
                            "idempotency_key": f"matrix-{caller}", "action": "price",
                            "pools-TOTAL_FORMS": "1", "pools-INITIAL_FORMS": "0",
                            "pools-0-id": "head", "pools-0-machine_type": "n1-standard-4"},
        "api-ray-jobs": {"cluster": world.objects["cluster"].pk,
                         "entrypoint": ["python", "-c", "print(2)"]},
        "api-template-list": {"name": "matrix", "team": team, "request": CPU_REQUEST},
        "api-channel-list": {"name": "new", "kind": "webhook", "notify_on": ["failed"],
                             "webhook_url": "https://hooks.slack.com/services/T/B/abcdefghijk"},
        "api-channel-detail": {"name": "ops", "kind": "webhook", "notify_on": ["failed"],
                               "enabled": False},
        "api-serving-models": {"job": job.pk, "step": 50},
        "api-serving-endpoints": {"name": "matrix", "team": team},
        "api-serving-endpoint": {"probe_enabled": False},
        "api-serving-deployments": {"model": entry.pk},
        "api-serving-slo": {"p95_ms": 200},
        "api-serving-predict": {"instances": [{"prompt": "a"}]},
        "api-serving-deployment": {"min_replicas": 1, "max_replicas": 2},
        "api-token-list": {"name": "more"},
        "api-member-list": {"username": "nina", "role": "viewer"},
        "api-member-detail": {"role": "viewer"},
        "team-members": {"action": "role", "member": world.objects["membership"].pk,
                         "role": "viewer"},
        "api-team-budget": {"monthly_budget_micros": 100_000_000, "on_exceed": "notify"},
        "api-team-tracking": {"wandb_entity": "acme", "wandb_project": "matrix"},
        "team-tracking": {"wandb_entity": "acme", "wandb_project": "matrix"},
        "job-compose": form_job, "job-validate": form_job, "job-export-form": form_job,
        "template-save": {**form_job, "template_name": "matrix"},
        "job-import": {"text": "workerPoolSpecs:\n- machineSpec: {machineType: n1-standard-4}"
                               "\n  replicaCount: 1\n  containerSpec: {imageUri: img}\n"},
        "notification-channels": {"name": "new", "kind": "webhook", "notify_on": ["failed"],
                                  "webhook_url": "https://hooks.slack.com/services/T/B/abcdefgh"},
        "notification-channel-edit": {"name": "ops", "kind": "webhook",
                                      "notify_on": ["failed"]},
        "serving-endpoint-create": {"name": "matrix", "team": world.team.pk,
                                    "probe_interval_s": "10"},
        "serving-model-register": {"job": job.pk, "step": "50"},
        "serving-endpoint-deploy": {"model": entry.pk, "machine_type": "n1-standard-4",
                                    "accelerator_count": "0", "min_replicas": "1",
                                    "max_replicas": "1", "autoscaling_target": "0",
                                    "traffic_percent": "100"},
        "serving-endpoint-slo": {"p95_ms": "200", "error_rate": "0.01", "window_s": "300",
                                 "min_samples": "5", "enabled": "on"},
        "serving-endpoint-probe": {"probe_interval_s": "10"},
        "serving-deployment-autoscaling": {"min_replicas": "1", "max_replicas": "2",
                                           "autoscaling_target": "0"},
        "token-list": {"name": "more"},
        "login": {"username": "nobody", "password": "wrong"},
    }
    return bodies.get(route.name, {}) if method != "get" else {}


# --- the database, before and after ------------------------------------------------------------

# Rows a request may write without changing anything a user owns.
UNWATCHED = {"security.auditentry", "core.lease", "logs.logreadquota", "sessions.session",
             "compose.composersettings"}


@functools.cache
def _fingerprint_sql() -> str:
    """One query: a hash of every watched table's rows (a token's last use is not a change)."""
    parts = []
    for model in apps.get_models():
        label = model._meta.label_lower
        if label in UNWATCHED or (model._meta.app_label not in {"jobs", "security"}
                                  and label != "auth.user"):
            continue
        table, pk = model._meta.db_table, model._meta.pk.column
        row = "(t.id, t.revoked_at)::text" if model is ApiToken else "t::text"
        parts.append(f"SELECT '{label}', md5(coalesce(string_agg({row}, '|' "
                     f'ORDER BY t."{pk}"), \'\')) FROM "{table}" t')
    return " UNION ALL ".join(parts)


def fingerprint() -> str:
    with connection.cursor() as cursor:
        cursor.execute(_fingerprint_sql())
        return hashlib.sha256(repr(sorted(cursor.fetchall())).encode()).hexdigest()


# --- calling ---------------------------------------------------------------------------------

@dataclass
class Outcome:
    status: int
    location: str
    changed: bool


def call(world: World, caller: str, route: Route, method: str) -> Outcome:
    tgt = target(route, world, caller)
    data = body(route, method, world, caller)
    client = world.clients.get((caller, route.api))
    if client is None:
        client = APIClient() if route.api else Client()
        if caller != "anonymous" and route.api:
            client.credentials(HTTP_AUTHORIZATION=f"Token {world.objects['tokens'][caller].key}")
        elif caller != "anonymous":
            client.force_login(world.users[caller])
        world.clients[(caller, route.api)] = client
    kwargs: dict[str, Any] = {"format": "json"} if route.api and method != "get" else {}
    with transaction.atomic():
        before = fingerprint()
        response = getattr(client, method)(tgt.url, data, **kwargs)
        changed = fingerprint() != before
        transaction.set_rollback(True)
    return Outcome(response.status_code, response.get("Location", ""), changed)


def refused(outcome: Outcome) -> bool:
    return outcome.status in (401, 403, 404) or (
        outcome.status == 302 and outcome.location.startswith("/login/"))


def expected(route: Route, method: str, caller: str, names_object: bool) -> str:
    """'allow', or the refusal: '401', '403', '404', 'login', '302'."""
    need = required(route, method)
    if need == "anyone":
        return "public"
    if caller == "anonymous":
        return "401" if route.api else "login"
    if need == "user":
        return "allow"
    if caller == "outsider":
        return "404" if names_object else "allow"
    if RANK[caller] >= RANK[need]:
        return "allow"
    return str(REFUSED_AS.get((route.name, method), 403))


def matches(want: str, outcome: Outcome) -> bool:
    if want == "public":
        return outcome.status < 500
    if want == "allow":
        # 400 still shows the caller got past the permission check (a body it did not like).
        return not refused(outcome) and outcome.status < 500
    if want == "login":
        return outcome.status == 302 and outcome.location.startswith("/login/")
    return outcome.status == int(want)


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[None]:
    """No broker and no cloud: tasks are dropped (a test of the permission, not the work);
    Vertex is a fake."""
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
    yield
    base.get_backend.cache_clear()
    serving_base.get_serving_backend.cache_clear()


MATRIX: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _write_matrix() -> Iterator[None]:
    """Keeps the walked matrix as a test artefact (routes x callers, with the answers)."""
    yield
    if MATRIX:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "roles-matrix.txt").write_text(
            "method route needs callers (status)\n" + "\n".join(MATRIX) + "\n")


@pytest.mark.parametrize("route", ROUTES, ids=[r.route for r in ROUTES])
def test_route_matrix(route: Route, db: None, quiet: None,
                      checkpoint_storage: Callable[[str], str]) -> None:
    world = build_world(checkpoint_storage)
    methods = declared_methods(route)
    if methods is None:
        # A function view: it handles what its admin caller is not told 405 for.
        methods = [m for m in ("get", "post") if call(world, "admin", route, m).status != 405]
    assert methods, f"{route.route}: no method answers"
    wrong = []
    for method in methods:
        row = []
        for caller in CALLERS:
            names_object = target(route, world, caller, method).names_object
            want = expected(route, method, caller, names_object)
            got = call(world, caller, route, method)
            row.append(f"{caller}={got.status}")
            if not matches(want, got):
                wrong.append(f"{method.upper()} {route.route} as {caller}: expected {want}, "
                             f"got {got.status} {got.location}")
            if (want != "allow" or method == "get") and got.changed and \
                    route.name not in ("login", "logout"):
                wrong.append(f"{method.upper()} {route.route} as {caller} changed the database "
                             f"({got.status})")
        MATRIX.append(f"{method.upper():6} /{route.route:55} needs {required(route, method):7} "
                      + " ".join(row))
    assert not wrong, "\n".join(wrong)


def test_every_route_was_walked() -> None:
    """The walk covers the API and the pages, and nothing but Django's admin is left out."""
    names = {r.name for r in ROUTES}
    for expected_name in ("api-job-list", "api-job-cancel", "api-channel-detail",
                          "api-serving-endpoint", "api-token-list", "api-team-audit",
                          "api-member-list", "api-member-detail", "team-members",
                          "job-list", "job-detail", "job-cancel", "token-list", "api-schema"):
        assert expected_name in names
    every = [r.route for r in _walk(get_resolver().url_patterns) if r.name not in NOT_WALKED]
    assert {r for r in every if not r.startswith(SKIPPED_PREFIXES)} == {r.route for r in ROUTES}


def test_django_admin_needs_staff(client: Client, db: None) -> None:
    team = Team.objects.create(name="Vision", slug="vision")
    user = make_user("ada", team, Role.ADMIN)
    client.force_login(user)
    assert client.get("/admin/").status_code == 302
    user.is_staff = True
    user.save()
    assert client.get("/admin/").status_code == 200
