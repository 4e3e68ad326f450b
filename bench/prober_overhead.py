"""What the latency prober itself costs, apart from the predictions it measures.

    python -m bench.prober_overhead [--probes 300] [--window 300] [--endpoints 50]

1. Control-plane work per probe: one `prober.probe` (the LatencySample insert) plus the
   `slo.evaluate` that follows it (a window query over --window samples, an UPDATE), against a
   backend whose predict returns at once, so only the prober's own work is timed; and the
   dispatcher's claim per due endpoint (`prober.dispatch` over --endpoints endpoints). On SQLite
   in a temporary folder (the demo's database).
2. Latency the measuring path adds: the same prediction sent straight to a replica over HTTP,
   and through the prober's path (VertexServing.predict: GAPIC client, gRPC, the emulator's
   PredictionService forwarding to that replica). The difference is what the emulator's hop
   adds to every probe; on Vertex the front end's hop is part of what clients see.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BODY = {"instances": [{"prompt": "def ", "max_tokens": 8}]}


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p99 = values[min(len(values) - 1, int(0.99 * len(values)))]
    return f"mean {statistics.fmean(values):6.2f}  p50 {statistics.median(values):6.2f}  " \
           f"p99 {p99:6.2f} ms"


def setup_django(tmp: Path, emulator: str) -> None:
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}", "CP_VAR_DIR": str(tmp),
        "VERTEX_EMULATOR_ADDR": emulator, "LOG_LEVEL": "WARNING",
        "VERTEX_EMULATOR_TOKEN_FILE": str(tmp / "lv" / "auth_token"),
    })
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def control_plane_cost(probes: int, window: int, endpoints: int) -> None:
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.test import override_settings
    from django.utils import timezone

    from controlplane.backends import serving_base
    from controlplane.runs.models import Job
    from controlplane.serving import prober, slo, tasks
    from controlplane.serving.models import Deployment, Endpoint, LatencySample, ModelEntry, Slo
    from controlplane.teams.models import Team

    team = Team.objects.create(name="bench", slug="bench")
    user = get_user_model().objects.create_user("bench")
    job = Job.objects.create(team=team, created_by=user, name="j", request={}, custom_job={},
                             project="p", region="us-central1")
    entry = ModelEntry.objects.create(team=team, job=job, created_by=user, display_name="m",
                                      artifact_uri="gs://b/m", image_uri="i", state="READY")
    rows = []
    for i in range(endpoints):
        endpoint = Endpoint.objects.create(team=team, created_by=user, name=f"e{i}",
                                           state="READY", vertex_name=f"projects/p/e/{i}")
        Deployment.objects.create(endpoint=endpoint, model_entry=entry, created_by=user,
                                  machine_type="n1-standard-4", state="DEPLOYED")
        rows.append(endpoint)
    target = rows[0]
    Slo.objects.create(endpoint=target, p95_ms=100, window_s=3600, min_samples=10)
    now = timezone.now()
    LatencySample.objects.bulk_create(
        LatencySample(endpoint=target, at=now - timedelta(seconds=i), latency_ms=20.0, ok=True)
        for i in range(window))

    with override_settings(CP_SERVING_BACKEND="bench.prober_overhead.InstantBackend"):
        serving_base.get_serving_backend.cache_clear()
        cycle = []
        for _ in range(probes):
            t0 = time.perf_counter()
            prober.probe(target.pk)
            slo.evaluate(target.pk)
            cycle.append((time.perf_counter() - t0) * 1000)
    print(f"probe + SLO evaluation ({window}+ samples in the window): {_ms(cycle)}")

    tasks.probe_endpoint.apply_async = lambda *a, **k: None  # count claims, queue nothing
    dispatch = []
    for _ in range(20):
        Endpoint.objects.update(next_probe_at=None)
        t0 = time.perf_counter()
        queued = prober.dispatch()
        dispatch.append((time.perf_counter() - t0) * 1000 / max(queued, 1))
    print(f"dispatch, per due endpoint ({endpoints} due):          {_ms(dispatch)}")


class InstantBackend:
    """predict() answers at once: only the prober's own work is timed."""

    def predict(self, endpoint: str, instances: list[Any], parameters: Any = None,
                timeout_s: float | None = None) -> Any:
        from controlplane.backends.serving_base import PredictResult

        return PredictResult([{"text": ""}] * len(instances), "1")


def measuring_path(tmp: Path, count: int, admin_addr: str) -> None:
    from google.cloud import aiplatform_v1 as v1

    from bench.serving_latency import export_tiny
    from controlplane.backends.serving import VertexServing
    from localvertex.admin.client import AdminClient

    export_tiny(tmp / "lv" / "gcs" / "bench" / "model")
    backend = VertexServing()
    backend.models.upload_model(request={
        "parent": backend.parent, "model_id": "bench",
        "model": v1.Model(display_name="bench", artifact_uri="gs://bench/model",
                          container_spec=v1.ModelContainerSpec(
                              image_uri="i", command=["python", "-m", "trainers.serve"],
                              health_route="/health", predict_route="/predict"))}).result()
    backend.create_endpoint("bench", "bench", {})
    endpoint = backend.endpoint_name("bench")
    spec_op = backend.deploy_model(endpoint, _spec(backend), {"0": 100})
    while not backend.get_operation(spec_op.name).done:
        time.sleep(0.2)
    from django.conf import settings

    with AdminClient(admin_addr, settings.VERTEX_EMULATOR_TOKEN) as admin:
        port = admin.call("GetEndpointReplicas", {"endpoint_id": "bench"})[
            "deployed_models"]["1"]["ready_ports"][0]
    # The replica listens in its deployment's network namespace where the emulator is root
    # (localvertex/serving/model_servers.py): the direct path connects from inside it.
    from localvertex.replicas import job_network
    from localvertex.serving.model_servers import ReplicaConnection, namespace_id

    netns = job_network.NETNS_DIR / job_network.name_for(tmp / "lv", namespace_id("bench", "1"))
    conn = ReplicaConnection(port, netns if netns.exists() else None, 30)
    body = json.dumps(BODY).encode()
    direct, through = [], []
    for _ in range(10):  # warm-up: connections, the replica's first forward passes
        backend.predict(endpoint, BODY["instances"])
    for _ in range(count):  # alternating, so both see the same machine load
        t0 = time.perf_counter()
        conn.request("POST", "/predict", body=body, headers={"Content-Type": "application/json"})
        conn.getresponse().read()
        direct.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        backend.predict(endpoint, BODY["instances"])
        through.append((time.perf_counter() - t0) * 1000)
    print(f"straight to the replica (HTTP):                  {_ms(direct)}")
    print(f"prober's path (GAPIC -> emulator -> replica):    {_ms(through)}")
    print(f"added by the measuring path: p50 "
          f"{statistics.median(through) - statistics.median(direct):.2f} ms")


def _spec(backend: Any) -> Any:
    from controlplane.backends.serving_base import DeploySpec

    return DeploySpec(deployed_model_id="1", model_name=backend.model_name("bench"),
                      display_name="bench", machine_type="n1-standard-4")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=300)
    parser.add_argument("--window", type=int, default=300, help="samples in the SLO window")
    parser.add_argument("--endpoints", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200, help="for the path comparison")
    args = parser.parse_args()

    import subprocess

    from bench.machine import cpu_model
    from config.ports import reserve_port
    from localvertex.client import wait_ready

    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        port, admin_port = reserve_port(), reserve_port()
        emulator = subprocess.Popen(
            [sys.executable, "-m", "localvertex", "--port", str(port), "--data-dir",
             str(tmp / "lv"), "--admin-port", str(admin_port), "--log-level", "WARNING"],
            cwd=REPO)
        try:
            wait_ready(f"127.0.0.1:{port}", timeout=60)
            setup_django(tmp, f"127.0.0.1:{port}")
            control_plane_cost(args.probes, args.window, args.endpoints)
            measuring_path(tmp, args.requests, f"127.0.0.1:{admin_port}")
        finally:
            emulator.terminate()
            emulator.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
