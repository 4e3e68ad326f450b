"""A strict Content-Security-Policy on every response.

Scripts and styles come only from the site's own static files (no inline script or style, no
eval), nothing is framed, forms post only back to the site, and plugins are off. The pages
keep their behaviour in static/js (page.js: confirmations, bar widths) and their looks in
static/css, so the policy needs no exception. A script injected into a page through any
user-supplied text would not run.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

PLOTLY_STYLE_HASHES = ("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
                       "2GF9hCGTDj/GGFNlQA54jDdMGl2fvoeZmZjAvBSiAtM=")
POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    # The vendored Plotly bundle adds two <style> elements of its own, always the same text
    # (an empty one it fills through the CSSOM, and its base rules): allowed by their hashes
    # only, so no other inline style, injected or not, applies.
    "style-src 'self' " + " ".join(f"'sha256-{h}'" for h in PLOTLY_STYLE_HASHES),
    # Plotly draws exported images and Swagger UI its icons as data: URIs.
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
))
HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault(HEADER, POLICY)
        return response
