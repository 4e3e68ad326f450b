"""Where the emulator keeps what Vertex would keep in Cloud Storage.

Vertex hands a job `gs://` URIs (base_output_directory, AIP_MODEL_DIR, ...). Locally a bucket is a
folder: `gs://bucket/path` lives at `<data-dir>/gcs/bucket/path`. The same mapping is what a
training container sees through Cloud Storage FUSE at `/gcs/bucket/path`, so that form is accepted
too. Anything else is already a local path and is returned unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

GCS_SCHEME = "gs://"
FUSE_ROOT = "/gcs/"


def local_path(data_dir: str | os.PathLike[str], uri: str) -> str:
    """The local folder standing in for `uri` (a trailing slash is kept, as Vertex's dirs have one).

    >>> local_path("/data", "gs://bucket/runs/1/")
    '/data/gcs/bucket/runs/1/'
    """
    if uri.startswith(GCS_SCHEME):
        rest = uri[len(GCS_SCHEME) :]
    elif uri.startswith(FUSE_ROOT):
        rest = uri[len(FUSE_ROOT) :]
    elif uri.startswith("file://"):
        return uri[len("file://") :]
    else:
        return uri
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise ValueError(f"no bucket in {uri!r}")
    parts = [p for p in key.split("/") if p]
    if any(p in (".", "..") for p in parts):
        # A key is a name, not a path: refuse anything that would leave the bucket's folder.
        raise ValueError(f"object name with '.' or '..' segments: {uri!r}")
    path = str((Path(data_dir).absolute() / "gcs" / bucket).joinpath(*parts))
    return path + "/" if key.endswith("/") else path

