"""Ray on the emulator: how long a Ray cluster takes to come up and go away, and how much sooner
a CustomJob placed on a persistent resource runs than one that waits for its machines.

    python -m bench.ray_cluster [--workers 2] [--queue-delay 5] [--pending-delay 5]

Figures, from the client's call to the state the PersistentResourceService / JobService
reports:
  ray up        CreatePersistentResource -> RUNNING (a head and --workers Ray worker nodes,
                one CPU each, all joined)
  ray down      DeletePersistentResource -> NotFound (every Ray process stopped)
  job running   CreateCustomJob -> JOB_STATE_RUNNING, for an ordinary job (the reference: the
                emulator's provisioning delays, --queue-delay + --pending-delay) and for one
                with persistentResourceId; printed with their ratio.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from google.api_core import exceptions as gexc
from google.cloud import aiplatform_v1 as v1
from google.cloud.aiplatform_v1.services.persistent_resource_service.transports import (
    PersistentResourceServiceGrpcTransport,
)

from bench.machine import machine
from config.ports import reserve_port
from localvertex import auth
from localvertex.client import job_client, wait_ready

PARENT = "projects/bench/locations/us-central1"
IMAGE = "us-docker.pkg.dev/vertex-ai/training/ray-cpu.2-47.py311:latest"


def pool(pool_id: str, replicas: int) -> v1.ResourcePool:
    return v1.ResourcePool(id=pool_id, replica_count=replicas,
                           machine_spec=v1.MachineSpec(machine_type="n1-standard-4"))


def until(fn, timeout: float = 300.0) -> float:
    start = time.monotonic()
    while not fn():
        if time.monotonic() - start > timeout:
            raise TimeoutError
        time.sleep(0.1)
    return time.monotonic() - start


def job_running_s(jobs, **spec) -> float:
    job = jobs.create_custom_job(parent=PARENT, custom_job=v1.CustomJob(
        display_name="bench", job_spec=v1.CustomJobSpec(worker_pool_specs=[v1.WorkerPoolSpec(
            machine_spec=v1.MachineSpec(machine_type="n1-standard-4"), replica_count=1,
            container_spec=v1.ContainerSpec(image_uri="us-docker.pkg.dev/b/t:1",
                                            command=["python", "-c", "import time; "
                                                     "time.sleep(30)"]))], **spec)))
    seconds = until(lambda: jobs.get_custom_job(name=job.name).state
                    == v1.JobState.JOB_STATE_RUNNING)
    jobs.cancel_custom_job(name=job.name)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queue-delay", type=float, default=5.0)
    parser.add_argument("--pending-delay", type=float, default=5.0)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    port = reserve_port()
    emulator = subprocess.Popen(
        [sys.executable, "-m", "localvertex", "--port", str(port), "--admin-port", "0",
         "--data-dir", str(data), "--queue-delay", str(args.queue_delay),
         "--pending-delay", str(args.pending_delay)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        address = f"127.0.0.1:{port}"
        wait_ready(address, timeout=30)
        token = auth.read(data / auth.TOKEN_FILE)
        resources = v1.PersistentResourceServiceClient(
            transport=PersistentResourceServiceGrpcTransport(
                channel=auth.channel(address, token)))
        jobs = job_client(address, token)
        print(f"machine: {machine()}")

        start = time.monotonic()
        resources.create_persistent_resource(
            parent=PARENT, persistent_resource_id="bench-ray",
            persistent_resource=v1.PersistentResource(
                resource_pools=[pool("head", 1), pool("workers", args.workers)],
                resource_runtime_spec=v1.ResourceRuntimeSpec(
                    ray_spec=v1.RaySpec(image_uri=IMAGE)))).result(timeout=300)
        print(f"ray up      {time.monotonic() - start:6.1f} s  (head + {args.workers} workers)")

        ordinary = job_running_s(jobs)
        placed = job_running_s(jobs, persistent_resource_id="bench-ray")
        print(f"job running {ordinary:6.1f} s  ordinary (reference)")
        print(f"job running {placed:6.1f} s  on the persistent resource "
              f"(ratio {placed / ordinary:.2f})")

        name = f"{PARENT}/persistentResources/bench-ray"
        start = time.monotonic()
        resources.delete_persistent_resource(name=name).result(timeout=120)

        def gone() -> bool:
            try:
                resources.get_persistent_resource(name=name)
            except gexc.NotFound:
                return True
            return False

        until(gone)
        print(f"ray down    {time.monotonic() - start:6.1f} s")
    finally:
        emulator.send_signal(signal.SIGTERM)
        emulator.wait(60)
        shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
