"""The Ray dashboard's address as a link on the cluster page, or no link.

Vertex gives the address as RAY_DASHBOARD_URI, a host (and port) without a scheme, served over
TLS (VERTEX_FACTS.md A2); the emulator gives 127.0.0.1:<port>, served over plain HTTP: the
scheme the backend reaches it with (controlplane/backends/clusters.py). The value comes from
outside the control plane and a user may influence it, so it is linked only when it is a plain
http(s) address: a host, an optional port and path, no user name, no whitespace or controls, no
other scheme (javascript:, data:). The template escapes it as it would any text.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

MAX_CHARS = 300
SCHEMES = ("http", "https")
# A host name or an IPv4 address, or an IPv6 one in brackets; then an optional port.
_NETLOC = re.compile(r"^(?:(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}\.?|\[[0-9A-Fa-f:.]+\])"
                     r"(?::[0-9]{1,5})?$")
# What a URL's path, query and fragment may hold unencoded (RFC 3986), and %-escapes.
_REST = re.compile(r"^[A-Za-z0-9._~!$&'()*+,;=:@/?%-]*$")


def url(address: str, *, emulated: bool) -> str | None:
    """The http(s) URL of the dashboard at ADDRESS, or None when it is not one to link."""
    address = address.strip()
    if not address or len(address) > MAX_CHARS:
        return None
    if "://" not in address:
        address = f"{'http' if emulated else 'https'}://{address}"
    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018 - raises ValueError for a port past 65535
    except ValueError:
        return None
    if parts.scheme.lower() not in SCHEMES or not _NETLOC.match(parts.netloc) or \
            not _REST.match(parts.path + parts.query + parts.fragment):
        return None
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path, parts.query,
                       parts.fragment))
