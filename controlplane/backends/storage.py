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


def check_checkpoint(path: str) -> CheckpointCheck:
    """Whether `path` (a step folder) holds a committed checkpoint now."""
    path = path.rstrip("/")
    local = _local_root_for(path) if path.startswith(GCS_SCHEME) else path
    if local is not None:
        if not os.path.isdir(local):
            return CheckpointCheck(False, f"{path} does not exist any more (deleted by rotation "
                                          "or by hand)")
        if not os.path.isfile(os.path.join(local, MARKER)):
            return CheckpointCheck(False, f"{path} is not a complete checkpoint (no {MARKER} "
                                          "marker: its write never finished)")
        return CheckpointCheck(True)
    bucket, key = _split(path)
    try:
        from google.api_core import exceptions as gexc

        exists = _client().bucket(bucket).blob(f"{key}/{MARKER}").exists(timeout=10)
    except gexc.GoogleAPICallError as exc:
        raise errors.TransientBackendError(f"cannot read {path}: {exc}") from exc
    if not exists:
        return CheckpointCheck(False, f"{path} has no {MARKER} marker: deleted, or never "
                                      "completed")
    return CheckpointCheck(True)


# Bucket location types Cloud Storage reports; a regional bucket is read from its own region.
READABLE_EVERYWHERE = frozenset({"multi-region", "dual-region"})


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
