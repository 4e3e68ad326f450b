"""The gs:// URI a checkpoint path stands for, as the job page shows it.

A trainer prints where it saved: a gs:// URI, the Cloud Storage FUSE mount on a Vertex replica
(/gcs/bucket/key), or, against the local emulator, the folder that stands in for the bucket
(CP_LOCAL_STORAGE_ROOT/bucket/key). The page shows all three as the gs:// URI they name, which
is what a user copies into gsutil or a resubmission (the restarts table and a resubmission's
header keep the printed path in a title).
Any other path (a replica's own disk) names no object and stays as written, as does one with
'.' or '..' segments, which could name something else than it seems.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

GCS = "gs://"
FUSE_ROOT = "/gcs/"


def storage_uri(path: Any) -> Any:
    """The URI `path` names (a value that is not a path: as it is, for the page to write)."""
    if not isinstance(path, str) or not path:
        return path
    if path.startswith(GCS):
        return path
    if path.startswith(FUSE_ROOT):
        rest = path[len(FUSE_ROOT):]
    else:
        root = str(getattr(settings, "CP_LOCAL_STORAGE_ROOT", "") or "").rstrip("/")
        if not root or not path.startswith(root + "/"):
            return path
        rest = path[len(root) + 1:]
    parts = rest.split("/")
    if not parts[0] or any(part in (".", "..") for part in parts):
        return path
    return GCS + rest
