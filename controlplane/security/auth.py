"""`Authorization: Token <key>` for the REST API, against the hashed tokens of
controlplane.security.models; the same tokens as `Authorization: Bearer <key>` on the routes
that take it (OpenAI's API in front of an endpoint: its clients send their api_key so).

The browser uses Django's session with CSRF (DRF's SessionAuthentication); scripts use this.
"""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from controlplane.security import tokens
from controlplane.teams import scope

KEYWORD = "Token"


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = KEYWORD

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                f"Invalid token header: use 'Authorization: {self.keyword} <key>'.")
        try:
            key = header[1].decode("ascii")
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("Invalid token.") from exc
        token = tokens.find(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        team_ids = tokens.team_ids(token)
        if not token.all_teams and not team_ids:
            # Narrowed to teams that no longer exist: never read as "every team".
            raise exceptions.AuthenticationFailed(
                "This token's teams no longer exist: make a new token.")
        scope.attach(token.user, scope.Scope(
            team_ids=None if token.all_teams else team_ids, read_only=token.read_only,
            expires_at=token.expires_at))
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (with WWW-Authenticate) rather than 403 to a missing login.
        return self.keyword


class BearerTokenAuthentication(ApiTokenAuthentication):
    """An API token sent as `Authorization: Bearer <key>`, as OpenAI's clients send api_key.
    Only views that list it take it (controlplane/serving/openai_api.py): elsewhere a Bearer
    header is no credential, as before."""

    keyword = "Bearer"
