"""``Idempotency-Key`` on the API's creating requests: a client that retries after a timeout
gets the first answer instead of a second job, endpoint or token.

    @idempotent                       on a view's ``post`` (or on a view class: its ``post``)

- No header: the request runs as always.
- A new key: the request runs inside one transaction with the key's row; a 2xx answer is
  stored with it. Any other answer rolls both back, so nothing was made and the key stays free.
- The same key and the same request (method, path, query, body) within ``TTL``: the stored
  status and body, with ``Idempotent-Replayed: true``, and nothing runs.
- The same key with another request: 409, keyed by the header's name.
- Concurrent identical requests: the unique (user, key) row is inserted first, inside the
  transaction, so the others wait on it (PostgreSQL's unique index, SQLite's write lock) and
  then replay what the first one stored; exactly one runs.

A page's form does the same with a key in a hidden field (``claim`` and ``store``): a second
click on its button, or a resent POST, finds what the first one made instead of making it again.

Keys are per user: every token and session of one user shares them, so a retry succeeds
whichever credential it carries, and one user's key never meets another's.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.core.models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
TTL = timedelta(hours=24)
MAX_KEY_LENGTH = 255
# Marks a view method as idempotent: the OpenAPI schema documents the header and the 409.
MARK = "_cp_idempotent"

F = TypeVar("F", bound=Callable[..., Any])


class KeyConflict(Exception):
    """The key was used with another request."""


def idempotent(target: Any) -> Any:
    """Wrap a view's ``post`` (or the ``post`` of a view class) with Idempotency-Key handling."""
    if isinstance(target, type):
        target.post = idempotent(target.post)
        return target

    @functools.wraps(target)
    def post(view: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
        key = request.headers.get(HEADER)
        if key is None or not request.user.is_authenticated:
            return target(view, request, *args, **kwargs)
        problem = key_problem(key)
        if problem:
            return _error(status.HTTP_400_BAD_REQUEST, problem)
        return _once(view, request, key, lambda: target(view, request, *args, **kwargs))

    setattr(post, MARK, True)
    return post


def form_key(key: str) -> str:
    """A page form's hidden idempotency key, or the form field's error saying what is wrong."""
    from django import forms

    problem = key_problem(key)
    if problem:
        raise forms.ValidationError(f"reload the page: its form key is not {problem}")
    return key


def key_problem(key: str) -> str | None:
    if not key or len(key) > MAX_KEY_LENGTH:
        return f"1 to {MAX_KEY_LENGTH} characters, e.g. a UUID"
    if not all(33 <= ord(c) <= 126 for c in key):
        return "printable ASCII without spaces, e.g. a UUID"
    return None


def fingerprint(request: Request) -> str:
    """What makes two requests the same one: method, path, query and the parsed body (so the
    JSON's spacing and key order do not count)."""
    try:
        body: Any = request.data
    except Exception:  # an unparsable body is compared byte for byte
        body = request.body.decode("utf-8", "replace")
    canonical = json.dumps(
        [request.method, request.path, sorted(request.query_params.lists()), body],
        sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _once(view: Any, request: Request, key: str, run: Callable[[], Response]) -> Response:
    print_ = fingerprint(request)
    user = request.user
    with transaction.atomic():
        try:
            existing = claim(user, key, print_, request)
        except KeyConflict:
            return _error(status.HTTP_409_CONFLICT,
                          "this key was already used with a different request; use a new key "
                          "for a new request")
        if existing is not None:
            return _replay(existing)
        try:
            response = run()
        except Exception as exc:
            # DRF's own answer to a refusal (400, 403, 404...); anything else propagates.
            response = view.handle_exception(exc)
        if not status.is_success(response.status_code):
            transaction.set_rollback(True)
            return response
        if not isinstance(response, Response):  # not a JSON answer: nothing to replay
            IdempotencyKey.objects.filter(user=user, key=key).delete()
            return response
        IdempotencyKey.objects.filter(user=user, key=key).update(
            status_code=response.status_code, response_body=_as_json(response))
        return response


def claim(user: Any, key: str, print_: str, request: Any) -> IdempotencyKey | None:
    """Insert the key's row, or return the live row an earlier request stored; KeyConflict
    when that request was another one. Called inside the transaction that does the work, so
    a second request with the key waits for the first to commit or roll back. REQUEST is a
    DRF or Django request (its method and path are kept)."""
    # The user's expired keys go as a new one comes: the table holds about a day of each user's.
    IdempotencyKey.objects.filter(user=user, created_at__lt=timezone.now() - TTL).delete()
    for _ in range(3):
        try:
            with transaction.atomic():
                IdempotencyKey.objects.create(
                    user=user, key=key, fingerprint=print_, method=request.method or "",
                    path=request.path[:500], status_code=0, response_body=None)
            return None
        except IntegrityError:
            # Another request holds or held this key; it has committed by now.
            row = IdempotencyKey.objects.filter(user=user, key=key).first()
            if row is None:  # rolled back meanwhile: the key is free again
                continue
            if row.fingerprint != print_:
                raise KeyConflict from None
            return row
    raise KeyConflict


def store(user: Any, key: str, status_code: int, body: Any) -> None:
    """Record the answer to the request that claimed KEY (JSON), in the same transaction."""
    IdempotencyKey.objects.filter(user=user, key=key).update(status_code=status_code,
                                                             response_body=body)


def _replay(row: IdempotencyKey) -> Response:
    response = Response(row.response_body, status=row.status_code)
    response[REPLAYED_HEADER] = "true"
    return response


def _as_json(response: Response) -> Any:
    """The body as the client received it (datetimes and decimals as DRF renders them)."""
    return json.loads(JSONRenderer().render(response.data) or b"null")


def _error(code: int, message: str) -> Response:
    return Response({HEADER: [message]}, status=code)

