"""Reduction Server rules (VERTEX_FACTS.md section 4): pool 2, no accelerators, GPU workers."""

from __future__ import annotations

import re
from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.lookups import get_accelerator, reduction_server_image
from vertexplan.catalog.view import JobView, PoolView

_IMAGE = re.compile(
    r"(?P<host>[^/]+)/vertex-ai-restricted/training/reductionserver(?::[\w.-]+|@sha256:[0-9a-f]+)?"
)
IMAGE_HOSTS = ("us-docker.pkg.dev", "europe-docker.pkg.dev", "asia-docker.pkg.dev")
REDUCTION_SERVER_POOL = 2


def is_reduction_server_image(image_uri: str) -> bool:
    return _IMAGE.fullmatch(image_uri) is not None


def _uses_gpus(pool: PoolView) -> bool:
    acc = get_accelerator(pool.accelerator_type.value or "")
    return acc is not None and acc.kind == "gpu" and pool.accelerators_requested > 0


def check_reduction_server(view: JobView) -> Iterator[FieldError]:
    for pool in view.active_pools:
        image = pool.image_uri
        match = _IMAGE.fullmatch(image) if image else None
        if match is None:
            continue
        if match["host"] not in IMAGE_HOSTS:
            example = (
                reduction_server_image(view.region)
                if view.region
                else reduction_server_image("us-central1")
            )
            yield FieldError(
                pool.image_uri_path,
                f"the Reduction Server image is published at "
                f"{', '.join(IMAGE_HOSTS)} only, not {match['host']}",
                (example,),
            )
        if pool.index != REDUCTION_SERVER_POOL:
            yield FieldError(
                pool.image_uri_path,
                f"the Reduction Server runs in workerPoolSpecs[2] only "
                f"(Vertex's fixed order: 0 chief, 1 workers, 2 parameter servers or Reduction "
                f"Server, 3 evaluators), not in workerPoolSpecs[{pool.index}]",
            )
            continue
        if pool.accelerators_readable and pool.has_accelerators:
            path = (
                pool.accelerator_type.path
                if pool.accelerator_type.present
                else pool.accelerator_count.path
            )
            yield FieldError(
                path,
                "Reduction Server replicas use no accelerators: remove acceleratorType "
                "and acceleratorCount (n1-highcpu-16 is the recommended machine)",
            )
        workers = [p for p in view.active_pools if p.index < REDUCTION_SERVER_POOL]
        without = [
            p
            for p in workers
            if p.machine is not None and p.accelerators_readable and not _uses_gpus(p)
        ]
        for worker in without:
            yield FieldError(
                pool.image_uri_path,
                f"the Reduction Server needs GPU workers: "
                f"workerPoolSpecs[{worker.index}] ({worker.machine_type.value}) has no GPUs",
            )
