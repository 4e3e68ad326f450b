"""Whether a checkpoint a job names is there and complete, read from the storage itself.

A trainer's checkpoint folder is complete when its COMMITTED marker exists (trainers/
checkpoint.py). Local paths (the emulator's stand-in for a bucket, a Cloud Storage FUSE mount)
are looked at directly; gs:// objects through Google's storage client, the only place here
that imports it. The bucket's location type tells whether another region may read it without
cross-region egress surprises (multi-region or dual-region buckets).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from controlplane.backends import errors

MARKER = "COMMITTED"
GCS_SCHEME = "gs://"
# Where Vertex mounts the buckets in every replica (Cloud Storage FUSE).
FUSE_ROOT = "/gcs/"


@dataclass(frozen=True)
class CheckpointCheck:
    complete: bool
    why: str = ""


def _split(uri: str) -> tuple[str, str]:
    bucket, _, key = uri[len(GCS_SCHEME):].partition("/")
    return bucket, key.strip("/")


def _local_root_for(uri: str) -> str | None:
    """The local folder standing in for a gs:// URI when the emulator keeps the buckets."""
    root = settings.CP_LOCAL_GCS_ROOT
    if not root:
        return None
    bucket, key = _split(uri)
    return os.path.join(root, bucket, *[p for p in key.split("/") if p not in ("", ".", "..")])


def path_for_writer(uri: str) -> str:
    """Where a process on the emulator's machine writes a gs:// folder: the local folder that
    stands in for it (with the emulator), else the URI itself (a trainer writes gs:// as is)."""
    local = _local_root_for(uri) if uri.startswith(GCS_SCHEME) else None
    if local is None:
        return uri
    return local + ("/" if uri.endswith("/") else "")


def check_checkpoint(path: str, marker: str | tuple[str, ...] | None = MARKER
                     ) -> CheckpointCheck:
    """Whether `path` (a step folder) holds a committed checkpoint now: its folder holds
    `marker` (or one of several), the file a complete checkpoint of its framework has (the
    product's trainers' COMMITTED; vertexplan/composer/resume_flags.py has the others');
    marker None: `path` is the checkpoint's one file. A /gcs/<bucket>/ path (Vertex's FUSE
    mount, as a replica names it) is read as gs://<bucket>/."""
    path = path.rstrip("/")
    if path.startswith(FUSE_ROOT):
        path = GCS_SCHEME + path[len(FUSE_ROOT):]
    markers = (marker,) if isinstance(marker, str) else marker
    named = " or ".join(markers) if markers else ""
    local = _local_root_for(path) if path.startswith(GCS_SCHEME) else path
    if local is not None:
        if markers is None:
            return CheckpointCheck(True) if os.path.isfile(local) else CheckpointCheck(
                False, f"{path} does not exist any more (deleted by rotation or by hand)")
        if not os.path.isdir(local):
            return CheckpointCheck(False, f"{path} does not exist any more (deleted by rotation "
                                          "or by hand)")
        if not any(os.path.isfile(os.path.join(local, m)) for m in markers):
            return CheckpointCheck(False, f"{path} is not a complete checkpoint (no {named} "
                                          "marker: its write never finished)")
        return CheckpointCheck(True)
    bucket, key = _split(path)
    blobs = [key] if markers is None else [f"{key}/{m}" for m in markers]
    try:
        from google.api_core import exceptions as gexc

        exists = any(_client().bucket(bucket).blob(blob).exists(timeout=10) for blob in blobs)
    except gexc.GoogleAPICallError as exc:
        raise errors.TransientBackendError(f"cannot read {path}: {exc}") from exc
    if not exists:
        what = "does not exist" if markers is None else f"has no {named} marker"
        return CheckpointCheck(False, f"{path} {what}: deleted, or never completed")
    return CheckpointCheck(True)


# Bucket location types Cloud Storage reports; a regional bucket is read from its own region.
READABLE_EVERYWHERE = frozenset({"multi-region", "dual-region"})


def read_small(folder: str, name: str, limit: int = 1 << 20) -> bytes | None:
    """The bytes of `name` in `folder` (gs://, /gcs/ or the emulator's local stand-in), or
    None when it is missing or larger than `limit` (a file meant to be small: a framework's
    state beside its checkpoint). A transient storage error raises TransientBackendError."""
    folder = folder.rstrip("/")
    if folder.startswith(FUSE_ROOT):
        folder = GCS_SCHEME + folder[len(FUSE_ROOT):]
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"{name!r} is not a file name")
    local = _local_root_for(folder) if folder.startswith(GCS_SCHEME) else folder
    if local is not None:
        target = os.path.join(local, name)
        try:
            if os.path.islink(target) or os.path.getsize(target) > limit:
                return None
            with open(target, "rb") as handle:
                return handle.read(limit + 1)[:limit]
        except OSError:
            return None
    bucket, key = _split(folder)
    try:
        from google.api_core import exceptions as gexc

        blob = _client().bucket(bucket).get_blob(f"{key}/{name}", timeout=10)
        if blob is None or (blob.size or 0) > limit:
            return None
        return bytes(blob.download_as_bytes(timeout=30))
    except gexc.NotFound:
        return None
    except gexc.GoogleAPICallError as exc:
        raise errors.TransientBackendError(f"cannot read {folder}/{name}: {exc}") from exc


def _client() -> Any:
    """Google's storage client; against a storage emulator (STORAGE_EMULATOR_HOST, with its
    scheme) when one is named, without credentials, as Google's own emulators are used."""
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    host = settings.STORAGE_EMULATOR_HOST
    if not host:
        return storage.Client(project=settings.VERTEX_PROJECT)
    return storage.Client(project=settings.VERTEX_PROJECT, credentials=AnonymousCredentials(),
                          client_options=ClientOptions(api_endpoint=host))


def bucket_location(uri: str) -> tuple[str, str] | None:
    """(location type, location) of the bucket behind a gs:// URI; None for local storage
    (with the Vertex emulator and no storage emulator, buckets are folders every emulated
    region reads)."""
    if not uri.startswith(GCS_SCHEME):
        return None
    if not settings.STORAGE_EMULATOR_HOST and (settings.CP_LOCAL_GCS_ROOT or
                                               settings.VERTEX_EMULATOR_ADDR):
        return None
    bucket, _ = _split(uri)
    from google.api_core import exceptions as gexc

    try:
        found = _client().get_bucket(bucket, timeout=10)
    except gexc.GoogleAPICallError as exc:
        raise errors.TransientBackendError(f"cannot read bucket {bucket}: {exc}") from exc
    return str(found.location_type or "").lower(), str(found.location or "").lower()
