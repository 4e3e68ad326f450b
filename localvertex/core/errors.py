"""The one exception the API handlers raise; server.py turns it into a gRPC status."""

from __future__ import annotations

import grpc
from google.protobuf import message


class ApiError(Exception):
    """An error answered to the client with a gRPC status code, as Google's APIs answer it."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        details: list[message.Message] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        # google.rpc error details (ErrorInfo, ...) sent in grpc-status-details-bin.
        self.details = details or []


def invalid(message: str) -> ApiError:
    return ApiError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> ApiError:
    return ApiError(grpc.StatusCode.NOT_FOUND, message)


def permission_denied(message: str) -> ApiError:
    return ApiError(grpc.StatusCode.PERMISSION_DENIED, message)


def failed_precondition(message: str) -> ApiError:
    return ApiError(grpc.StatusCode.FAILED_PRECONDITION, message)
