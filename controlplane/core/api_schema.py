"""The OpenAPI schema and its docs page: generated once per process, not per request (a
265 KB document that takes about a second of CPU to make), and shown only to signed-in
callers unless CP_API_SCHEMA_PUBLIC publishes it (on by default with DEBUG, where the client
generator and the stack tests read it).

The schema depends on the code alone: the version and language a request asks for are not
honoured (each would be another generation, and an unbounded cache of them)."""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

_lock = threading.Lock()
_schema: dict[str, Any] = {}


def forget() -> None:
    """Drop the generated schema (a test that counts generations starts from none)."""
    with _lock:
        _schema.clear()


class _SignedInUnlessPublished:
    def get_permissions(self) -> list[BasePermission]:
        return [AllowAny() if settings.CP_API_SCHEMA_PUBLIC else IsAuthenticated()]


class SchemaView(_SignedInUnlessPublished, SpectacularAPIView):
    def _get_schema_response(self, request: Request) -> Response:
        with _lock:
            if "schema" not in _schema:
                generator = self.generator_class(urlconf=self.urlconf,
                                                 api_version=self.api_version,
                                                 patterns=self.patterns)
                _schema["schema"] = generator.get_schema(request=request,
                                                         public=self.serve_public)
        return Response(data=_schema["schema"], headers={
            "Content-Disposition": f'inline; filename="{self._get_filename(request, None)}"'})


class DocsView(_SignedInUnlessPublished, SpectacularSwaggerSplitView):
    pass
