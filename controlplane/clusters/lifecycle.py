"""Creating, resizing and deleting clusters, and running Ray jobs on them.

The request side (create_cluster, set_replicas, request_delete, submit_ray_job, request_stop)
checks, records and queues tasks by name; the task side (reconcile, advance_ray_job) talks to
the backend and is level-triggered: it compares what Vertex (or Ray) says with the row and
moves the row, so a lost message or a killed worker is caught up by the next sweep.
"""

from __future__ import annotations

import logging
import re
import shlex
from typing import Any

from django.conf import settings
from django.db import transaction

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.clusters_base import get_cluster_backend
from controlplane.clusters import policy, ray_jobs
from controlplane.clusters.models import Cluster, RayJob
from controlplane.core.queue import enqueue
from controlplane.teams import quotas as team_quotas
from vertexplan.clusters import ClusterPlan, compose_persistent_resource, hourly_cost, ray_logs
from vertexplan.pricing import PricingError

log = logging.getLogger(__name__)

TASKS = "controlplane.clusters.tasks."
C = Cluster.State
R = RayJob.State
# While Vertex works on a cluster the task looks again this often.
POLL_S = 1.0
MAX_LOG_CHARS = 200_000
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
MAX_ARGS = 64
MAX_ARG_CHARS = 1000


class ClusterError(Exception):
    """Bad input: `fields` maps each field to its messages (what is wrong, what is valid)."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in fields.items()))
        self.fields = fields


def _field_errors(plan_errors) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for error in plan_errors:
        fields.setdefault(error.path or "detail", []).append(error.message)
    return fields


def _price(cluster: Cluster, resource: dict[str, Any]) -> None:
    try:
        cost = hourly_cost(resource, cluster.region)
    except PricingError as exc:
        # A resource the table cannot price still runs; its cost shows as unknown.
        log.warning("cluster %s has no price: %s", cluster.pk, exc)
        cluster.hourly_micros = cluster.min_hourly_micros = cluster.max_hourly_micros = 0
        cluster.price_source = ""
        return
    cluster.hourly_micros = cost.hourly_micros
    cluster.min_hourly_micros = cost.min_hourly_micros
    cluster.max_hourly_micros = cost.max_hourly_micros
    cluster.price_source = cost.estimate.table_source[:300]


# -- requests ---------------------------------------------------------------------------------


def check_cluster(request: dict[str, Any], region: str) -> ClusterPlan:
    """The PersistentResource REQUEST composes to (vertexplan.clusters), or a ClusterError
    naming every bad field; `name` stands for the resource id in the messages."""
    data = dict(request)
    # The team's name for the cluster stands in for the resource id in the checks; Vertex gets
    # `cp-cl-<pk>`, which no team can choose.
    data["resource_id"] = data.pop("name", "")
    plan = compose_persistent_resource(data, region)
    if not plan.ok:
        fields = _field_errors(plan.errors)
        if "resource_id" in fields:
            fields["name"] = [m.replace("resource_id", "name") for m in fields.pop("resource_id")]
        raise ClusterError(fields)
    assert plan.request is not None and plan.resource is not None
    return plan


def hold_to_team_policy(team, plan: ClusterPlan, region: str) -> None:
    """A ClusterError naming every field the team's policy does not allow (service account,
    network, reservations: controlplane/clusters/policy.py), and, with the queue in front of
    Vertex on, pools that could never be held (more than the project's quota, or than the
    team's guarantee: controlplane/teams/quotas.py)."""
    assert plan.resource is not None
    fields = policy.violations(plan.resource, team)
    too_big = team_quotas.cluster_problem(team, plan.resource, region)
    if too_big:
        fields.setdefault("pools", []).append(too_big)
    if fields:
        raise ClusterError(fields)


def price_cluster(request: dict[str, Any], team=None) -> Cluster:
    """An unsaved cluster for REQUEST with the price it would have per hour: what the create
    form shows before anything is created. ClusterError as create_cluster raises it (the
    team's policy is held when TEAM is given)."""
    region = settings.VERTEX_REGION
    plan = check_cluster(request, region)
    if team is not None:
        hold_to_team_policy(team, plan, region)
    cluster = Cluster(name=plan.request.resource_id, region=region, request=request,
                      resource=plan.resource,
                      ray_version=plan.request.ray.version if plan.request.ray else "")
    _price(cluster, plan.resource)
    return cluster


def create_cluster(*, team, user, request: dict[str, Any]) -> Cluster:
    """Check REQUEST (vertexplan.clusters), record the cluster and queue its creation; a
    ClusterError names every bad field, and nothing is created."""
    region = settings.VERTEX_REGION
    plan = check_cluster(request, region)
    hold_to_team_policy(team, plan, region)
    with transaction.atomic():
        if Cluster.objects.filter(team=team, name=plan.request.resource_id).exclude(
                state__in=[C.DELETED, C.FAILED]).exists():
            raise ClusterError({"name": [f"your team already has a cluster called "
                                         f"{plan.request.resource_id!r}; delete it or pick "
                                         "another name"]})
        cluster = Cluster(team=team, created_by=user, name=plan.request.resource_id,
                          region=region, request=request, resource=plan.resource,
                          ray_version=plan.request.ray.version if plan.request.ray else "")
        _price(cluster, plan.resource)
        cluster.save()
        enqueue(TASKS + "reconcile_cluster", str(cluster.pk))
    return cluster


def set_replicas(cluster: Cluster, replicas: dict[str, Any]) -> Cluster:
    """New replica counts by pool id (machines never change); checked as a new cluster is."""
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        if cluster.state != C.RUNNING:
            raise ClusterError({"replicas": [f"cluster {cluster.name} is {cluster.state}; "
                                             "replica counts change only while it is RUNNING"]})
        pools = [dict(p) for p in cluster.request.get("pools", [])]
        ids = [p.get("id") for p in pools]
        if not isinstance(replicas, dict) or not replicas or set(replicas) - set(ids):
            raise ClusterError({"replicas": [f"give new replica counts by pool id; pools: "
                                             f"{', '.join(map(str, ids))}"]})
        for pool in pools:
            if pool["id"] in replicas:
                pool["replica_count"] = replicas[pool["id"]]
        request = {**cluster.request, "pools": pools}
        data = {**request, "resource_id": request.get("name", cluster.name)}
        data.pop("name", None)
        plan = compose_persistent_resource(data, cluster.region)
        if not plan.ok:
            raise ClusterError(_field_errors(plan.errors))
        assert plan.resource is not None
        too_big = team_quotas.cluster_problem(cluster.team, plan.resource, cluster.region)
        if too_big:
            raise ClusterError({"replicas": [too_big]})
        cluster.request = request
        cluster.resource = plan.resource
        _price(cluster, plan.resource)
        cluster.save(update_fields=["request", "resource", "hourly_micros", "min_hourly_micros",
                                    "max_hourly_micros", "price_source"])
        cluster.transition(C.UPDATING)
        enqueue(TASKS + "reconcile_cluster", str(cluster.pk))
    return cluster


def request_delete(cluster: Cluster) -> None:
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        if cluster.state in (C.DELETING, C.DELETED):
            return
        if cluster.state == C.CREATING and not cluster.operation_name and \
                not cluster.vertex_name:
            cluster.transition(C.DELETED)  # never reached Vertex
            return
        cluster.transition(C.DELETING)
        for job in cluster.ray_jobs.exclude(state__in=[R.SUCCEEDED, R.FAILED, R.STOPPED]):
            job.transition(R.STOPPED, message="the cluster was deleted")
        enqueue(TASKS + "reconcile_cluster", str(cluster.pk))


# -- the task side ----------------------------------------------------------------------------


def reconcile(cluster_id: int) -> bool:
    """One step towards what the row asks for; True while there is more to wait for."""
    backend = get_cluster_backend()
    with transaction.atomic():
        try:
            cluster = Cluster.objects.select_for_update().get(pk=cluster_id)
        except Cluster.DoesNotExist:
            return False
        if cluster.state == C.CREATING:
            return _advance_create(backend, cluster)
        if cluster.state == C.UPDATING:
            return _advance_update(backend, cluster)
        if cluster.state == C.DELETING:
            return _advance_delete(backend, cluster)
        if cluster.state == C.RUNNING:
            return _check_running(backend, cluster)
    return False


def _labelled(cluster: Cluster) -> dict[str, Any]:
    """The resource as created: with its team's label, by which the emulator runs its Ray
    nodes as the team's own user (localvertex/replicas/team_users.py); a team cannot write
    cp-* labels itself (vertexplan.clusters)."""
    labels = {**cluster.resource.get("labels", {}),
              contract_labels.TEAM: contract_labels.team_value(cluster.team.slug)}
    return {**cluster.resource, "labels": labels}


def _advance_create(backend, cluster: Cluster) -> bool:
    if not cluster.vertex_name:
        try:
            op = backend.create(cluster.vertex_resource_id, _labelled(cluster))
        except (errors.InvalidJobSpec, errors.PermissionDenied, errors.FailedPrecondition) as exc:
            cluster.transition(C.FAILED, error=str(exc))
            return False
        cluster.vertex_name = backend.resource_name(cluster.vertex_resource_id)
        cluster.operation_name = op.name
        cluster.save(update_fields=["vertex_name", "operation_name"])
    return _settle(backend, cluster)


def _settle(backend, cluster: Cluster) -> bool:
    """RUNNING or FAILED once Vertex says so; True while it is still on its way."""
    try:
        remote = backend.get(cluster.vertex_name)
    except errors.NotFound:
        cluster.transition(C.FAILED, error="Vertex has no such persistent resource any more")
        return False
    if remote.state == "RUNNING":
        cluster.transition(C.RUNNING, dashboard_uri=remote.dashboard)
        return False
    if remote.state == "ERROR":
        cluster.transition(C.FAILED, error=remote.error_message or "Vertex reported ERROR")
        return False
    return True


def _advance_update(backend, cluster: Cluster) -> bool:
    if not cluster.operation_name:
        op = backend.set_replicas(cluster.vertex_name, cluster.resource["resourcePools"])
        cluster.operation_name = op.name
        cluster.save(update_fields=["operation_name"])
        return True  # the resource reads UPDATING from now on
    if not backend.get_operation(cluster.operation_name).done:
        return True
    return _settle(backend, cluster)


def _advance_delete(backend, cluster: Cluster) -> bool:
    if not cluster.vertex_name:
        cluster.transition(C.DELETED)
        return False
    if not cluster.operation_name:
        op = backend.delete(cluster.vertex_name)
        cluster.operation_name = op.name
        cluster.save(update_fields=["operation_name"])
    try:
        backend.get(cluster.vertex_name)
    except errors.NotFound:
        cluster.transition(C.DELETED)  # gone: the cost stops here
        return False
    return True


def _check_running(backend, cluster: Cluster) -> bool:
    try:
        remote = backend.get(cluster.vertex_name)
    except errors.NotFound:
        cluster.transition(C.FAILED, error="the persistent resource disappeared from Vertex")
        return False
    if remote.state == "ERROR":
        cluster.transition(C.FAILED, error=remote.error_message or "Vertex reported ERROR")
    elif remote.dashboard != cluster.dashboard_uri:
        cluster.dashboard_uri = remote.dashboard  # a reboot moves it
        cluster.save(update_fields=["dashboard_uri"])
    return False


def reconcile_all() -> None:
    """The sweep: every cluster on its way somewhere gets a step."""
    for pk in Cluster.objects.filter(state__in=[C.CREATING, C.UPDATING, C.DELETING]) \
            .values_list("pk", flat=True):
        enqueue(TASKS + "reconcile_cluster", str(pk))
    for pk in RayJob.objects.exclude(state__in=[R.SUCCEEDED, R.FAILED, R.STOPPED]) \
            .values_list("pk", flat=True):
        enqueue(TASKS + "advance_ray_job", str(pk))


# -- Ray jobs ---------------------------------------------------------------------------------


def _check_entrypoint(entrypoint: Any) -> list[str]:
    if not isinstance(entrypoint, list) or not entrypoint or len(entrypoint) > MAX_ARGS or \
            not all(isinstance(a, str) and 0 < len(a) <= MAX_ARG_CHARS and "\0" not in a
                    for a in entrypoint):
        raise ClusterError({"entrypoint": [
            f"the command as a list of 1 to {MAX_ARGS} arguments (each 1 to {MAX_ARG_CHARS} "
            "characters), e.g. [\"python\", \"-m\", \"trainers.ray_train\"]; it is run without "
            "a shell"]})
    return entrypoint


def _check_env(env: Any) -> dict[str, str]:
    if env in (None, ""):
        return {}
    if not isinstance(env, dict) or len(env) > 64:
        raise ClusterError({"env_vars": ["up to 64 NAME: value pairs"]})
    for name, value in env.items():
        if not ENV_NAME.match(str(name)) or not isinstance(value, str) or len(value) > 4096:
            raise ClusterError({"env_vars": [f"{str(name)[:40]!r}: names are upper-case "
                                             "letters, digits and _, values strings of up to "
                                             "4096 characters"]})
    return env


def submit_ray_job(*, cluster: Cluster, user, entrypoint: Any, env_vars: Any = None,
                   entrypoint_num_cpus: float | None = None) -> RayJob:
    entrypoint = _check_entrypoint(entrypoint)
    env = _check_env(env_vars)
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        if not cluster.ray_version:
            raise ClusterError({"cluster": [f"cluster {cluster.name} has no Ray runtime"]})
        if cluster.state not in (C.RUNNING, C.UPDATING):
            raise ClusterError({"cluster": [
                f"cluster {cluster.name} is {cluster.state}: Ray jobs run on a RUNNING "
                "cluster" + (" (create a new one)" if not cluster.live else "")]})
        job = RayJob.objects.create(team=cluster.team, cluster=cluster, created_by=user,
                                    entrypoint=entrypoint, env_vars=env,
                                    entrypoint_num_cpus=entrypoint_num_cpus,
                                    job=ray_jobs.create_job(cluster, user, entrypoint))
        ray_jobs.attach(job)
        enqueue(TASKS + "advance_ray_job", str(job.pk))
    return job


def request_stop(job: RayJob) -> None:
    with transaction.atomic():
        job = RayJob.objects.select_for_update().get(pk=job.pk)
        if job.ended:
            return
        if job.state == R.QUEUED:
            job.transition(R.STOPPED, message="stopped before it was submitted")
            return
        job.stop_requested = True
        job.save(update_fields=["stop_requested"])
        enqueue(TASKS + "advance_ray_job", str(job.pk))


def advance_ray_job(job_id: int) -> bool:
    """Submit, stop or read the state and logs of one Ray job; True while it runs."""
    backend = get_cluster_backend()
    with transaction.atomic():
        job = RayJob.objects.select_for_update().select_related("cluster").get(pk=job_id)
        if job.ended:
            return False
        dashboard = job.cluster.dashboard_uri
        if not dashboard or not job.cluster.live:
            job.transition(R.FAILED, message=f"cluster {job.cluster.name} is "
                           f"{job.cluster.state}")
            return False
        if job.state == R.QUEUED:
            # The job's own folder as Vertex gives a CustomJob's replicas theirs; what the
            # user set wins.
            where = ray_jobs.output_env(job.job) if job.job else {}
            backend.submit_ray_job(
                dashboard, job.submission_id, shlex.join(job.entrypoint),
                {"env_vars": {**where, **job.env_vars, "CP_RAY_JOB": str(job.pk)}},
                contract_labels.ray_job_labels(job.pk, job.team.slug),
                job.entrypoint_num_cpus)
            job.transition(R.PENDING)
        if job.stop_requested:
            backend.stop_ray_job(dashboard, job.submission_id)
        status = backend.ray_job(dashboard, job.submission_id)
        logs = backend.ray_job_logs(dashboard, job.submission_id)
        # The row keeps the output's tail only, so that is what tells whether it changed: the
        # whole output compared with it would differ at every poll once it outgrew the tail,
        # and the summary be worked out and the row written again each second of the job.
        kept = logs[-MAX_LOG_CHARS:]
        if kept != job.logs:
            job.logs = kept
            # Read on from the stored lines (their events are in the summary already).
            job.summary = ray_logs.summary(logs, after=job.lines_stored, before=job.summary)
            job.save(update_fields=["logs", "summary"])
        # Every line into the log store as the Ray job's job's, before the state that may end
        # it (its last lines are in when the job page says it ended).
        ray_jobs.store_output(job, logs, final=status.ended)
        if status.status in (R.RUNNING, R.SUCCEEDED, R.FAILED, R.STOPPED):
            job.transition(status.status, message=status.message)
        return not job.ended
