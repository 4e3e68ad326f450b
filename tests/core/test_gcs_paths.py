"""One reading of storage paths (controlplane/core/gcs_paths.py) for the logs' trust checks and
the job page: a path the page shows as a gs:// URI is one the trust check reads as that bucket
and key, and a path the check refuses (a '..', a control character, a folder beside the
emulator's root) the page shows as written."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.core import gcs_paths
from controlplane.logs import trust
from controlplane.runs.uris import storage_uri

ROOT = "/srv/emu/gcs"
PATHS = [
    "gs://b/jobs/vision/job-1/step-1", "/gcs/b/jobs/vision/job-1/model/",
    f"{ROOT}/b/jobs/vision/job-1/checkpoints/x", f"{ROOT}/b/../../etc/passwd",
    "/gcs/b/jobs/vision/job-1/x\n", f"{ROOT}/b/k\x1b[31m", f"{ROOT}x/b/k", "/tmp/ckpt/step-5",
    "/gcs/b/./x", "gs://b/jobs/../speech", f"{ROOT}/", "/gcs//b/k",
]


@pytest.fixture(autouse=True)
def emulated_buckets(settings: Any) -> None:
    settings.CP_LOCAL_STORAGE_ROOT = ROOT


@pytest.mark.parametrize("path", PATHS)
def test_the_page_and_the_trust_check_read_a_path_alike(path: str) -> None:
    parts = gcs_paths.bucket_key(path)
    shown = storage_uri(path)
    if path.startswith("gs://"):
        assert shown == path  # a URI is shown as the trainer wrote it
    elif parts:
        assert shown.removeprefix("gs://").strip("/").split("/") == parts
    else:
        assert shown == path
    assert trust.bucket_key is gcs_paths.bucket_key  # one function, not a copy


def test_a_control_character_names_no_object() -> None:
    assert gcs_paths.bucket_key("/gcs/b/x\n") is None
    assert storage_uri("/gcs/b/x\n") == "/gcs/b/x\n"
    assert gcs_paths.bucket_key(f"{ROOT}/b/k/") == ["b", "k"]
    assert storage_uri(f"{ROOT}/b/k/") == "gs://b/k/" and storage_uri("/gcs//b/k") == "gs://b/k"
