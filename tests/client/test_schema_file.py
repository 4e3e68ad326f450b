"""The schema the client is generated from is the one the server serves."""

from __future__ import annotations

import json
from pathlib import Path

from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_schema_is_the_servers(client: Client, db: None) -> None:
    """client/openapi.json (what `make client` generates the client from) is the schema the
    server serves now: a changed view, serializer or docstring fails here, in the inner loop,
    before the integration test regenerates the whole client."""
    served = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    checked_in = json.loads((ROOT / "client" / "openapi.json").read_text())
    assert served == checked_in, "client/ is behind the server's schema: run `make client`"
