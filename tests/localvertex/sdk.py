"""Google's high-level SDK (`google.cloud.aiplatform`) pointed at the emulator, unchanged but
for its channel.

Vertex speaks gRPC over TLS and the SDK has no plaintext option: `aiplatform.init(api_endpoint=)`
still builds a TLS channel (VERTEX_FACTS.md section 8). The emulator speaks plaintext on
loopback, so `sdk_channel` makes google-api-core's channel factory build the emulator's
channel (and only its) on gRPC's local credentials instead of TLS; every SDK class, request
and poll above it is Google's own. The emulator's token is given as a user gives the SDK an
access token, `aiplatform.init(credentials=google.oauth2.credentials.Credentials(token))`:
google-api-core's own auth plugin sends it (`authorization: Bearer ...`) on every call.
Cloud Storage calls the SDK makes (staging a script's package) go through Google's storage
client to the emulator's own Cloud Storage (localvertex/storage/: STORAGE_EMULATOR_HOST), which
keeps a bucket as the folder the emulator reads (localvertex/replicas/storage.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest
from google.api_core import grpc_helpers
from google.cloud import aiplatform
from google.oauth2.credentials import Credentials

from tests.localvertex.helpers import PROJECT, EmulatorProcess

LOCATION = "us-central1"
STAGING_BUCKET = "gs://sdk-staging"


@contextmanager
def sdk_channel(monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess) -> Iterator[None]:
    """aiplatform.init for the emulator: the project, region, staging bucket and the
    emulator's token as the user's credentials, plaintext gRPC to the emulator's address, and
    its Cloud Storage for Google's storage client."""
    secure = grpc_helpers.create_channel
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", emulator.storage_host)

    def create_channel(target, *args, **kwargs):
        if target == emulator.address:
            # Loopback only: gRPC sends call credentials on a plaintext channel only there.
            kwargs["ssl_credentials"] = grpc.local_channel_credentials()
        return secure(target, *args, **kwargs)

    monkeypatch.setattr(grpc_helpers, "create_channel", create_channel)
    aiplatform.init(project=PROJECT, location=LOCATION, api_endpoint=emulator.address,
                    credentials=Credentials(token=emulator.token),
                    staging_bucket=STAGING_BUCKET)
    try:
        yield
    finally:
        # The SDK keeps its settings in a module global: leave none behind for other tests.
        aiplatform.initializer.global_config.__init__()
