"""Where a path lies in Cloud Storage, by one set of rules for every app that reads one.

A trainer names an object three ways: a gs:// URI, the Cloud Storage FUSE mount on a Vertex
replica (/gcs/bucket/key), or, against the local emulator, the folder that stands in for the
buckets (CP_LOCAL_STORAGE_ROOT/bucket/key). Any other path (a replica's own disk) names no
object; nor does one with '.' or '..' segments or control characters, which could name
something else than it seems. The logs app checks an event's paths against a job's output
prefix with these rules (logs/trust.py), and the job page shows a path as the gs:// URI it
names (runs/uris.py): one reading, so the page never shows as a bucket's a path the trust
check would refuse.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django.conf import settings

GCS = "gs://"
FUSE_ROOT = "/gcs/"


def object_name(path: Any) -> str | None:
    """The 'bucket/key...' a storage path names, as written after its root; None for a value
    that is not a path in Cloud Storage (the segments are not checked: bucket_key does)."""
    if not isinstance(path, str) or not path:
        return None
    if path.startswith(GCS):
        return path[len(GCS):]
    if path.startswith(FUSE_ROOT):
        return path[len(FUSE_ROOT):]
    root = str(getattr(settings, "CP_LOCAL_STORAGE_ROOT", "") or "").rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1:]
    return None


def bucket_key(path: Any) -> list[str] | None:
    """The [bucket, key segments...] a path names in Cloud Storage (empty segments dropped);
    None for any other path, and for one with '.' or '..' segments or control characters."""
    name = object_name(path)
    if name is None or any(unicodedata.category(ch) == "Cc" for ch in name):
        return None
    parts = [p for p in name.split("/") if p]
    if any(p in (".", "..") for p in parts):
        return None
    return parts
