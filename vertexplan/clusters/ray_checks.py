"""The Ray part of a cluster request: the version and image Vertex offers, and the head pool's
rules (one replica, no autoscaling, GPUs only; UNCONFIRMED, from the Ray on Vertex SDK's
cluster_init, which refuses them before calling the API)."""

from __future__ import annotations

import re

from vertexplan.catalog import FieldError, get_machine_type, is_tpu
from vertexplan.clusters.ray_versions import OFFERED, version_of_image
from vertexplan.clusters.request import ClusterRequest, PoolRequest, RayRequest

IMAGE = re.compile(
    r"^[a-z0-9.-]+(:[0-9]+)?/[A-Za-z0-9._/-]+(:[A-Za-z0-9._-]+|@sha256:[a-f0-9]{64})?$")


def check_ray(request: ClusterRequest) -> tuple[list[FieldError], int]:
    ray = request.ray
    assert ray is not None
    errors: list[FieldError] = []
    offered = ", ".join(OFFERED)
    if ray.version not in OFFERED:
        errors.append(FieldError("ray.version", f"ray.version {ray.version!r} is not offered "
                                 f"by Ray on Vertex AI; offered: {offered}",
                                 tuple(OFFERED)))
    elif ray.python and ray.python not in OFFERED[ray.version]:
        pythons = ", ".join(OFFERED[ray.version])
        errors.append(FieldError("ray.python", f"ray.python {ray.python!r}: Ray {ray.version} "
                                 f"images carry Python {pythons}",
                                 OFFERED[ray.version]))
    if ray.image_uri and not IMAGE.match(ray.image_uri):
        errors.append(FieldError("ray.image_uri", "ray.image_uri must be an image reference "
                                 "(HOST/PATH[:TAG]); empty picks Vertex's prebuilt Ray image"))
    elif ray.image_uri and (version := version_of_image(ray.image_uri)) and \
            version != ray.version:
        errors.append(FieldError("ray.image_uri", f"ray.image_uri carries Ray {version}, not "
                                 f"ray.version {ray.version}"))
    ids = [p.id for p in request.pools]
    head_index = 0
    if ray.head_pool_id:
        if ray.head_pool_id not in ids:
            errors.append(FieldError("ray.head_pool_id", f"ray.head_pool_id "
                                     f"{ray.head_pool_id!r} names no pool; pools: "
                                     f"{', '.join(ids)}", tuple(ids)))
            return errors, 0
        head_index = ids.index(ray.head_pool_id)
    if request.pools:
        errors += check_head(head_index, request.pools[head_index], ray)
    return errors, head_index


def check_head(index: int, pool: PoolRequest, ray: RayRequest) -> list[FieldError]:
    path = f"pools[{index}]"
    errors = []
    if pool.replica_count != 1:
        errors.append(FieldError(f"{path}.replica_count", f"{path} runs the Ray head: its "
                                 "replica_count must be 1 (add worker pools for more nodes)"))
    if pool.min_replica_count is not None or pool.max_replica_count is not None:
        errors.append(FieldError(f"{path}.min_replica_count", f"{path} runs the Ray head, "
                                 "which does not autoscale: leave min/max_replica_count empty"))
    if is_tpu(pool.machine_type):
        errors.append(FieldError(f"{path}.machine_type", f"{path} runs the Ray head, which "
                                 "cannot run on a TPU machine; put TPUs in a worker pool"))
    if pool.accelerator_type:
        gpu_machine = get_machine_type(pool.machine_type)
        if pool.accelerator_type.startswith("TPU"):
            errors.append(FieldError(f"{path}.accelerator_type", f"{path} runs the Ray head, "
                                     "which takes GPUs only; put TPUs in a worker pool"))
        elif gpu_machine is not None and "ray-cpu." in ray.image_uri:
            errors.append(FieldError(f"{path}.accelerator_type", f"{path} runs the Ray head "
                                     f"with GPUs, but ray.image_uri {ray.image_uri!r} is a CPU "
                                     "image; use the ray-gpu image or no accelerators"))
    return errors
