"""A job's event stream (GET /jobs/<id>/events/, server-sent events): what `logs -f` reads
while the job runs, so a line shows as soon as the control plane stores it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from vcp.output import SEVERITY
from vertex_control_plane_client import AuthenticatedClient


def least_severity(name: str | None) -> int:
    raw = (name or "").strip().upper()
    if raw.isascii() and raw.isdigit():  # int() refuses '²', which isdigit() passes
        return int(raw)
    return SEVERITY.get(raw, 0)


def events(client: AuthenticatedClient, job_id: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event, data) as they come; ends when the server ends the stream. Nothing at all when
    the server has no stream to give (no push configured, an older server): the caller polls."""
    http = client.get_httpx_client()
    timeout = httpx.Timeout(10.0, read=60.0)  # a keep-alive comes every 15 s
    with http.stream("GET", f"/jobs/{int(job_id)}/events/", timeout=timeout,
                     headers={"Accept": "text/event-stream"}) as response:
        if response.status_code != 200 or not response.headers.get(
                "content-type", "").startswith("text/event-stream"):
            return
        kind = ""
        for raw in response.iter_lines():
            if raw.startswith("event: "):
                kind = raw[len("event: "):]
            elif raw.startswith("data: ") and kind:
                try:
                    data = json.loads(raw[len("data: "):])
                except ValueError:
                    data = {}
                yield kind, data
                kind = ""


def follow(client: AuthenticatedClient, job_id: int, catch_up: Callable[[], None],
           show: Callable[[dict[str, Any]], None], severity: str | None,
           shown: set[str]) -> bool:
    """Print the job's lines as they are pushed until its stream ends. `catch_up` prints what
    is stored so far (called once subscribed, so nothing falls between); `shown` holds the
    insertIds printed, which are not printed twice. Returns whether a stream was read."""
    least = least_severity(severity)
    opened = False
    for kind, data in events(client, job_id):
        if kind == "ready":
            opened = True
            catch_up()
        elif kind == "lines":
            if data.get("more"):
                catch_up()
            for line in data.get("lines", []):
                if line.get("id") in shown or int(line.get("severity", 0)) < least:
                    continue
                shown.add(line["id"])
                show({"attempt": line.get("attempt"), "timestamp": line.get("t"),
                      "severity": line.get("severity"), "replica": line.get("replica"),
                      "message": line.get("message"), "insert_id": line["id"]})
    return opened
