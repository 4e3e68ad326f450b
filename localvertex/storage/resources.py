"""The JSON API's resources as the storage service (server.py) answers them: a bucket and an
object, the fields Google's storage client and gcsfs read."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from localvertex.storage.objects import ObjectInfo

# The location every local bucket reports: one folder, read alike from every emulated region
# (so the control plane's cross-region checkpoint check passes, as with the folders before).
LOCATION = ("multi-region", "US")


def _time(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def object_resource(base: str, info: ObjectInfo, md5: str, crc32c: str) -> dict[str, Any]:
    """An object; BASE is the service's URL as the client named it (its links point there)."""
    name = quote(info.name, safe="")
    return {
        "kind": "storage#object", "id": f"{info.bucket}/{info.name}/{info.generation}",
        "selfLink": f"{base}/storage/v1/b/{info.bucket}/o/{name}", "name": info.name,
        "bucket": info.bucket,
        "mediaLink": f"{base}/download/storage/v1/b/{info.bucket}/o/{name}"
                     f"?generation={info.generation}&alt=media",
        "generation": str(info.generation), "metageneration": "1",
        "contentType": info.content_type, "storageClass": "STANDARD",
        "size": str(info.size), "md5Hash": md5, "crc32c": crc32c,
        "etag": base64.b64encode(str(info.generation).encode()).decode(),
        "timeCreated": _time(info.updated_ns), "updated": _time(info.updated_ns),
        "timeStorageClassUpdated": _time(info.updated_ns),
    }


def bucket_resource(base: str, name: str) -> dict[str, Any]:
    return {"kind": "storage#bucket", "id": name, "name": name,
            "selfLink": f"{base}/storage/v1/b/{name}", "projectNumber": "0",
            "metageneration": "1", "locationType": LOCATION[0], "location": LOCATION[1],
            "storageClass": "STANDARD", "etag": "CAE=",
            "timeCreated": _time(0), "updated": _time(0),
            "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": True}}}
