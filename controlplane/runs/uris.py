"""The gs:// URI a checkpoint path stands for, as the job page shows it.

A trainer prints where it saved: a gs:// URI, the Cloud Storage FUSE mount on a Vertex replica
(/gcs/bucket/key), or, against the local emulator, the folder that stands in for the bucket
(CP_LOCAL_STORAGE_ROOT/bucket/key). The page shows all three as the gs:// URI they name, which
is what a user copies into gsutil or a resubmission (the restarts table and a resubmission's
header keep the printed path in a title).
Any other path (a replica's own disk) names no object and stays as written, as does one with
'.' or '..' segments or control characters, which could name something else than it seems
(the rules are controlplane/core/gcs_paths.py's, which the logs' trust checks read too).
"""

from __future__ import annotations

from typing import Any

from controlplane.core.gcs_paths import GCS, bucket_key


def storage_uri(path: Any) -> Any:
    """The URI `path` names (a value that is not a path: as it is, for the page to write)."""
    if not isinstance(path, str) or not path or path.startswith(GCS):
        return path
    # Read by the rules the trust checks read paths by (controlplane/core/gcs_paths.py): the
    # URI names the bucket and key they see ('/gcs//b/k' is bucket b, as the mount reads it).
    parts = bucket_key(path)
    if not parts:
        return path
    return GCS + "/".join(parts) + ("/" if path.endswith("/") else "")
