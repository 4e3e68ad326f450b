"""The calls vcp makes, on the generated client, and what their answers mean for the exit code.

Exit codes scripts can rely on:
    0  done
    1  refused by the server (the field errors on stderr), or --wait saw the job fail or cancel
    2  usage: a bad option or argument (click's own)
    3  the server could not be reached or failed (5xx)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click
import httpx

from vcp.output import field_errors
from vertex_control_plane_client import AuthenticatedClient
from vertex_control_plane_client.types import Response

REFUSED = 1
UNREACHABLE = 3
TIMEOUT_S = 60.0


class Refused(click.ClickException):
    """The server said no: each field error on its own line on stderr."""

    exit_code = REFUSED

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        lines = field_errors(body) if body not in (None, "", {}) else []
        super().__init__("\n".join(lines) or f"refused (HTTP {status})")

    def show(self, file: Any = None) -> None:
        click.echo(f"refused (HTTP {self.status}):", err=True)
        for line in self.message.splitlines():
            click.echo(f"  {line}", err=True)


class Unreachable(click.ClickException):
    exit_code = UNREACHABLE


def client(server: str, token: str) -> AuthenticatedClient:
    return AuthenticatedClient(base_url=server, token=token, prefix="Token",
                               timeout=httpx.Timeout(TIMEOUT_S), raise_on_unexpected_status=False)


def call(operation: Callable[..., Response[Any]], **kwargs: Any) -> Any:
    """Run a generated operation's ``sync_detailed``; the parsed body of a 2xx, else exit."""
    try:
        response = operation(**kwargs)
    except httpx.HTTPError as exc:
        raise Unreachable(f"the server could not be reached: {exc}") from exc
    check(response.status_code, response.content)
    return response.parsed


def send(api: AuthenticatedClient, method: str, path: str, *, body: Any = None,
         params: dict[str, Any] | None = None, headers: dict[str, str] | None = None
         ) -> httpx.Response:
    """A request whose body is the user's own document, sent as it is: the server, not this
    client, judges its fields (a model would drop a key it does not know instead of refusing)."""
    try:
        response = api.get_httpx_client().request(method, path, json=body, params=params,
                                                  headers=headers)
    except httpx.HTTPError as exc:
        raise Unreachable(f"the server could not be reached: {exc}") from exc
    check(response.status_code, response.content)
    return response


def check(status: int, content: bytes) -> None:
    if 200 <= status < 300:
        return
    if status >= 500:
        raise Unreachable(f"the server failed (HTTP {status})")
    try:
        body: Any = json.loads(content) if content else None
    except ValueError:
        body = content.decode("utf-8", "replace")
    raise Refused(status, body)


def plain(value: Any) -> Any:
    """A generated model (or a list of them) as JSON values."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value
