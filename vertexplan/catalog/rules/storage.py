"""Storage rules: NFS mounts, the PSC interface, and disks Vertex does not have."""

from __future__ import annotations

import re
from collections.abc import Iterator

from vertexplan.catalog.errors import FieldError, child, item
from vertexplan.catalog.rules._common import json_type, short, wrong_type
from vertexplan.catalog.storage import PERSISTENT_DISK_ANSWER, PERSISTENT_DISK_KEYS
from vertexplan.catalog.view import JobView, read

_ATTACHMENT = re.compile(r"projects/([^/]+)/regions/([^/]+)/networkAttachments/([^/]+)")
_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")


def check_nfs_mounts(view: JobView) -> Iterator[FieldError]:
    for pool in view.active_pools:
        f = read(pool.raw, pool.path, "nfsMounts")
        if not f.present:
            continue
        if not isinstance(f.raw, list):
            yield wrong_type(f, "a list of {server, path, mountPoint}",
                             '[{"server": "10.0.0.2", "path": "/share", "mountPoint": "data"}]')
            continue
        seen: dict[str, int] = {}
        for i, mount in enumerate(f.raw):
            path = item(f.path, i)
            if not isinstance(mount, dict):
                yield FieldError(path, f"nfsMounts[{i}] must be an object with server, path and "
                                 f"mountPoint, got {json_type(mount)}")
                continue
            yield from _mount(mount, path, i, seen)


def _mount(mount: dict, path: str, i: int, seen: dict[str, int]) -> Iterator[FieldError]:
    server = read(mount, path, "server")
    if not (isinstance(server.raw, str) and server.raw.strip()):
        yield FieldError(server.path, f"nfsMounts[{i}].server is required: the NFS server's IP "
                         "address or host name in the job's VPC, e.g. 10.0.0.2")
    share = read(mount, path, "path")
    if not (isinstance(share.raw, str) and share.raw.startswith("/")):
        fix = ("/" + share.raw,) if isinstance(share.raw, str) and share.raw else ()
        yield FieldError(share.path, f"nfsMounts[{i}].path must be the exported directory, an "
                         f"absolute path such as /share, got {short(share.raw)}", fix)
    point = read(mount, path, "mountPoint")
    raw = point.raw
    if not (isinstance(raw, str) and raw.strip()):
        yield FieldError(point.path, f"nfsMounts[{i}].mountPoint is required: the share appears "
                         "at /mnt/nfs/<mountPoint> in the container")
    elif raw.startswith("/") or ".." in raw.split("/") or any(c.isspace() for c in raw):
        fixed = "/".join(p for p in raw.split("/") if p and p != "..").replace(" ", "-")
        yield FieldError(point.path, f"nfsMounts[{i}].mountPoint {short(raw)} must be a relative "
                         "name without spaces or '..' (the share is mounted at "
                         "/mnt/nfs/<mountPoint>)", (fixed,) if fixed else ())
    elif raw in seen:
        yield FieldError(point.path, f"nfsMounts[{i}].mountPoint {raw} repeats "
                         f"nfsMounts[{seen[raw]}]: each share needs its own mount point")
    else:
        seen[raw] = i


def check_psc_interface(view: JobView) -> Iterator[FieldError]:
    f = read(view.job_spec.value, "jobSpec", "pscInterfaceConfig")
    if not f.present:
        return
    if not isinstance(f.raw, dict):
        yield wrong_type(f, "an object", '{"networkAttachment": "my-attachment"}')
        return
    attachment = read(f.raw, f.path, "networkAttachment")
    if not attachment.present or attachment.raw == "":
        yield FieldError(attachment.path, "pscInterfaceConfig.networkAttachment is required: "
                         "the Private Service Connect network attachment, by name or as "
                         "projects/{project}/regions/{region}/networkAttachments/{name}")
        return
    raw = attachment.raw
    if not isinstance(raw, str):
        yield wrong_type(attachment, "a network attachment name")
        return
    match = _ATTACHMENT.fullmatch(raw)
    name = match.group(3) if match else raw
    if not match and "/" in raw:
        yield FieldError(attachment.path, "networkAttachment must be a name or "
                         "projects/{project}/regions/{region}/networkAttachments/{name}, got "
                         f"{short(raw)}")
    elif not _NAME.fullmatch(name):
        yield FieldError(attachment.path, f"networkAttachment {short(name)} is not a network "
                         "attachment name (lowercase letters, digits and '-', starting with a "
                         "letter, at most 63 characters)")
    elif match and view.region and match.group(2) != view.region:
        yield FieldError(attachment.path, f"the network attachment is in {match.group(2)}, but "
                         f"the job runs in {view.region}: a PSC interface attaches within the "
                         "job's region", (raw.replace(f"/regions/{match.group(2)}/",
                                                      f"/regions/{view.region}/"),))


def check_persistent_disks(view: JobView) -> Iterator[FieldError]:
    """A 'persistent disk' per node is a common request Vertex has no field for: say why."""
    for pool in view.active_pools:
        for obj, path in ((pool.raw, pool.path), (pool.disk_spec.value, pool.disk_spec.path),
                          (pool.machine_spec.value, pool.machine_spec.path)):
            if not isinstance(obj, dict):
                continue
            for key in obj:
                if key in PERSISTENT_DISK_KEYS:
                    yield FieldError(child(path, key), f"{key}: {PERSISTENT_DISK_ANSWER}",
                                     ("baseOutputDirectory", "nfsMounts", "bootDiskSizeGb"))
