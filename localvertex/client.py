"""Google's own GAPIC clients pointed at the emulator (or any plaintext gRPC endpoint).

With a channel given, the clients look up no credentials (passing credentials as well raises
ValueError), and `client_options.api_endpoint` alone would build a TLS channel: hence these.
Every call carries the emulator's token (auth.py), which its data dir's auth_token holds.
"""

from __future__ import annotations

import grpc
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1.services.job_service.transports import JobServiceGrpcTransport
from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
from google.cloud.logging_v2.services.logging_service_v2.transports import (
    LoggingServiceV2GrpcTransport,
)

from localvertex import auth


def job_client(address: str, token: str) -> aiplatform_v1.JobServiceClient:
    """A JobServiceClient talking plaintext gRPC to `address` ("127.0.0.1:8470") with TOKEN."""
    channel = auth.channel(address, token)
    return aiplatform_v1.JobServiceClient(transport=JobServiceGrpcTransport(channel=channel))


def logging_client(address: str, token: str) -> LoggingServiceV2Client:
    """A LoggingServiceV2Client talking plaintext gRPC to `address` with TOKEN."""
    channel = auth.channel(address, token)
    return LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=channel))


def wait_ready(address: str, timeout: float = 15.0) -> None:
    """Block until a gRPC server answers at `address`; grpc.FutureTimeoutError otherwise."""
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=timeout)
