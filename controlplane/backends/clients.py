"""How the backends reach Google, in one place: the local emulator over a plaintext channel
whose every call carries the emulator's token (VERTEX_EMULATOR_TOKEN, localvertex/auth.py; with
a channel given, the clients look up no credentials), or Google's endpoints with Application
Default Credentials (Vertex AI's regional one, `{region}-aiplatform.googleapis.com`)."""

from __future__ import annotations

from typing import Any, TypeVar

import grpc
from django.conf import settings

from localvertex import auth

C = TypeVar("C")


def emulator_channel() -> grpc.Channel | None:
    """A channel to the emulator when VERTEX_EMULATOR_ADDR names one; None for Google. The
    caller shares it among the clients it makes."""
    addr = settings.VERTEX_EMULATOR_ADDR
    return auth.channel(addr, settings.VERTEX_EMULATOR_TOKEN) if addr else None


def google_client(client: type[C], transport: type, channel: grpc.Channel | None, *,
                  regional: bool = True, region: str | None = None) -> C:
    """CLIENT on the emulator's CHANNEL, or on Google: Vertex AI's services at the region's
    endpoint (`regional`; REGION, or VERTEX_REGION), others (Cloud Logging) at their global
    default."""
    if channel is not None:
        return client(transport=transport(channel=channel))
    options: dict[str, Any] = (
        {"api_endpoint": f"{region or settings.VERTEX_REGION}-aiplatform.googleapis.com"}
        if regional else {})
    return client(client_options=options or None)
