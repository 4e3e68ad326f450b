"""A path under /api/ with no route (a malformed id included) answers a JSON 404, as every
other refusal of the API does, for any method and with no CSRF token."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.parametrize("method, path", [
    ("get", "/api/v1/jobs/abc/"), ("post", "/api/v1/jobs/null,null/cancel/"),
    ("delete", "/api/v1/no-such-thing/"), ("put", "/api/v2/jobs/"),
])
def test_an_unknown_api_path_is_a_json_404(method: str, path: str, db: None) -> None:
    response = getattr(Client(enforce_csrf_checks=True), method)(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


def test_pages_keep_their_own_404(client: Client, db: None) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert "application/json" not in response["Content-Type"]
