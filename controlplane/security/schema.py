"""The token scheme in the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "controlplane.security.auth.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Token-based authentication: "Token <key>" (make a key at /tokens/).',
        }


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """The same API token as `Authorization: Bearer <key>`, on OpenAI's routes in front of an
    endpoint (what OpenAI's clients send as their api_key)."""

    target_class = "controlplane.security.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer",
                "description": "An API token (make a key at /tokens/) as OpenAI's clients "
                               "send their api_key: \"Bearer <key>\"."}
