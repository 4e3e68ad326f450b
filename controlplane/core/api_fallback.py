"""What the REST API answers for a path it has no route for: a JSON 404, as every other refusal
of the API is JSON (Django's own page is HTML, and with DEBUG a long one), so a client that
sends a malformed id (``/api/v1/jobs/abc/``) reads the same ``{"detail": ...}`` as for an id
that names nothing."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt  # nothing is done: a refused CSRF check would answer HTML instead
def unknown_route(request: HttpRequest, rest: str = "") -> JsonResponse:
    return JsonResponse({"detail": "Not found."}, status=404)
