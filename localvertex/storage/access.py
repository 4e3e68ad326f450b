"""The IAM stand-in: who a connection to the storage service is, and what it may touch.

Cloud Storage decides by the caller's identity; locally the identity is the connection's way
in. The service's own port on the host's 127.0.0.1 is the control plane's (and the machine
owner's: the tests, a user's SDK script): it sees every bucket. A job's replicas run in a
network namespace of their own (replicas/job_network.py) and cannot reach the host's loopback
at all; the service opens a door inside each job's namespace (doors.py), and what comes
through it is that job's team.

A team may read, write, list and delete objects under the output folder
(base_output_directory) of any of its jobs, the jobs the control plane labelled with it
(contract/labels.py's cp-team): its policy's prefix as the control plane applied it, since
every job's folder lies under its team's prefix. It may read a bucket's metadata where it has
such a folder, and nothing else: another team's folders, the bucket listings above its own
folders, creating or deleting buckets are refused with 403 as Cloud Storage refuses. Jobs
without the label (a user's own SDK script) are one principal together, as their replicas
share the sandbox's user: the output folders of every unlabelled job.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from localvertex.storage.objects import StorageError

GS = "gs://"
# A denied request looks the team's jobs up again at most this often (a job submitted
# after the door opened, a restart of the team's earlier job).
_REFRESH_S = 1.0


def split(uri: str) -> tuple[str, str] | None:
    """(bucket, folder prefix ending in '/' or '') of a gs:// folder URI; None otherwise."""
    if not uri.startswith(GS):
        return None
    bucket, _, key = uri[len(GS):].partition("/")
    key = "/".join(p for p in key.split("/") if p)
    return (bucket, f"{key}/" if key else "") if bucket else None


@dataclass
class Principal:
    """Who asks: WHO names it in refusals; GRANTS gives its gs:// folders (None: all)."""

    who: str
    grants: Callable[[], Iterable[str]] | None = None
    _known: tuple[tuple[str, str], ...] | None = None
    _read_at: float = field(default=float("-inf"))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def everything(self) -> bool:
        return self.grants is None

    def _folders(self, refresh: bool) -> tuple[tuple[str, str], ...]:
        with self._lock:
            now = time.monotonic()
            if self.grants is not None and (
                    self._known is None or (refresh and now - self._read_at >= _REFRESH_S)):
                self._known = tuple(f for f in map(split, self.grants()) if f is not None)
                self._read_at = now
            return self._known or ()

    def _any(self, test: Callable[[str, str], bool]) -> bool:
        if self.grants is None:
            return True
        return any(test(*f) for f in self._folders(False)) or any(
            test(*f) for f in self._folders(True))

    def may_touch(self, bucket: str, name: str) -> bool:
        return self._any(lambda b, p: b == bucket and name.startswith(p))

    def may_list(self, bucket: str, prefix: str) -> bool:
        """A listing inside one of its folders, or of a prefix leading to one (whose answer
        `shows` cuts down to its folders)."""
        return self._any(lambda b, p: b == bucket and (prefix.startswith(p) or
                                                       p.startswith(prefix)))

    def shows(self, bucket: str, name: str) -> bool:
        """Whether a listing shows NAME to it: an object inside one of its folders, or a
        folder prefix ("a/b/") inside one or on the way to one."""
        folder = name.endswith("/")
        return self._any(lambda b, p: b == bucket and (name.startswith(p) or
                                                       (folder and p.startswith(name))))

    def may_see_bucket(self, bucket: str) -> bool:
        return self._any(lambda b, p: b == bucket)

    def check(self, allowed: bool, permission: str, resource: str) -> None:
        if not allowed:
            raise StorageError(403, f"{self.who} does not have {permission} access to the "
                                    f"Google Cloud Storage {resource}. Permission "
                                    f"'{permission}' denied on resource (or it may not exist).")


CONTROL_PLANE = Principal("the control plane")
