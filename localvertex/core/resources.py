"""What every resource service of the emulator reads the same way: a parent
(projects/P/locations/L), the time a resource changed, and, for the Model, Endpoint and
PersistentResource services, the `labels.k="v"` filter and the offset page tokens they answer
with. (JobService's resources page by id: jobs/resources.py.)"""

from __future__ import annotations

import re
import time

from google.protobuf import timestamp_pb2

from localvertex.core.errors import invalid
from localvertex.core.timeutil import to_timestamp

PARENT = re.compile(r"^projects/([^/]+)/locations/([^/]+)$")
DEFAULT_PAGE_SIZE = 100
_LABEL_FILTER = re.compile(r'^\s*labels\.([a-z0-9_-]+)\s*=\s*"([^"]*)"\s*$')


def parse_parent(parent: str) -> tuple[str, str]:
    """(project, location) of projects/P/locations/L; INVALID_ARGUMENT otherwise."""
    m = PARENT.match(parent)
    if not m:
        raise invalid(f"parent {parent!r} is not projects/PROJECT/locations/LOCATION.")
    return m.group(1), m.group(2)


def check_parent(parent: str) -> str:
    parse_parent(parent)
    return parent


def location_of(name: str) -> str:
    """projects/P/locations/L of a resource's full name: its parent."""
    return "/".join(name.split("/")[:4])


def now() -> timestamp_pb2.Timestamp:
    """The current time as a protobuf Timestamp."""
    return to_timestamp(time.time_ns())


def matches(labels, filter_: str) -> bool:
    """The filter subset the control plane uses: `labels.k="v"` terms joined by AND."""
    if not filter_.strip():
        return True
    for term in re.split(r"\s+AND\s+", filter_.strip()):
        m = _LABEL_FILTER.match(term)
        if not m:
            raise invalid(f"Unsupported filter term {term!r}.")
        if labels.get(m.group(1)) != m.group(2):
            return False
    return True


def page(items: list, page_size: int, page_token: str) -> tuple[list, str]:
    """One page of `items` and the next page's token (its offset; "" after the last)."""
    try:
        start = int(page_token) if page_token else 0
    except ValueError as exc:
        raise invalid("Invalid page_token.") from exc
    size = page_size if page_size > 0 else DEFAULT_PAGE_SIZE
    chunk = items[start:start + size]
    more = start + size < len(items)
    return chunk, str(start + size) if more else ""
