"""Gzip for the API's JSON answers, and for nothing else.

A page of 50 jobs is about 19 kB of JSON and compresses to a tenth of that, which a client
away from the server waits for. What is left alone, and why:
- HTML pages: they carry the CSRF token beside what a user typed (a job's name, a search),
  which is what BREACH needs to read the token back from compressed sizes; they stay as they
  are.
- Streaming answers (the server-sent event stream of a job's lines, file downloads): gzip
  would hold lines back until a compressed block fills, and a live stream must not wait.
- Anything but GET and HEAD: the answers that hand out a secret (a new API token) answer a
  POST, and the same rule keeps any future one out.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase
from django.middleware.gzip import GZipMiddleware

COMPRESSED_TYPES = ("application/json", "application/vnd.oai.openapi+json")


class JsonGZipMiddleware(GZipMiddleware):
    def process_response(self, request: HttpRequest,
                         response: HttpResponseBase) -> HttpResponseBase:
        content_type = response.get("Content-Type", "").split(";")[0].strip().lower()
        if (response.streaming or request.method not in ("GET", "HEAD")
                or content_type not in COMPRESSED_TYPES):
            return response
        return super().process_response(request, response)
