"""Where vcp finds its server and token: the command line, then VCP_SERVER / VCP_TOKEN, then
the file `vcp login` wrote in the user's config directory (readable by the user alone)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import click

DEFAULT_SERVER = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class Credentials:
    server: str
    token: str


def config_file() -> Path:
    return Path(click.get_app_dir("vcp")) / "config.json"


def load() -> dict[str, str]:
    path = config_file()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise click.ClickException(
            f"{path} cannot be read ({exc}): run `vcp login` again") from exc
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def save(server: str, token: str) -> Path:
    """Write the file with mode 0600 from its creation: the token is never readable by others,
    not even for a moment."""
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump({"server": server, "token": token}, out)
    os.chmod(path, 0o600)  # a file that existed keeps its old mode through O_CREAT
    return path


def resolve(server: str | None, token: str | None) -> Credentials:
    stored = load()
    server = server or os.environ.get("VCP_SERVER") or stored.get("server") or DEFAULT_SERVER
    token = token or os.environ.get("VCP_TOKEN") or stored.get("token")
    if not token:
        raise click.UsageError("no token: run `vcp login` or set VCP_TOKEN")
    return Credentials(server=server.rstrip("/"), token=token)
