"""What every command is given: the server, the token, the output format, and the client made
from them on first use."""

from __future__ import annotations

from typing import Any

import click

from vcp import api, settings
from vcp.output import emit
from vertex_control_plane_client import AuthenticatedClient


class Context:
    def __init__(self, server: str | None, token: str | None, output: str) -> None:
        self.server, self.token, self.output = server, token, output
        self._client: AuthenticatedClient | None = None

    @property
    def client(self) -> AuthenticatedClient:
        if self._client is None:
            credentials = settings.resolve(self.server, self.token)
            self._client = api.client(credentials.server, credentials.token)
        return self._client

    def emit(self, data: Any, columns: tuple[str, ...] = ()) -> None:
        emit(api.plain(data), self.output, columns)


pass_context = click.make_pass_decorator(Context)
