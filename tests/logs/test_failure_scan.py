"""The page's one failure search hands each replica the places of its own lines that may
report, as a search of that replica's lines alone would."""

from __future__ import annotations

from datetime import UTC, datetime

from controlplane.logs import failure_scan
from vertexplan.logparse import failures

AT = datetime(2026, 11, 1, tzinfo=UTC)


def _rows(job_id: int, replica: str, messages: list[str]) -> list[tuple[object, ...]]:
    return [(job_id, 1, AT, 200, replica, message, f"{replica}-{n}")
            for n, message in enumerate(messages)]


def test_each_replica_gets_the_marks_its_own_search_would_give() -> None:
    scan = {
        (1, 1, "workerpool0-0"): _rows(1, "workerpool0-0", [
            "step 1 ok", "Traceback (most recent call last):", '  File "t.py", line 2',
            "torch.OutOfMemoryError: CUDA out of memory"]),
        (1, 1, "workerpool1-0"): _rows(1, "workerpool1-0", ["all quiet", "nothing"]),
        (2, 1, "workerpool0-0"): _rows(2, "workerpool0-0", [
            "exit code 137", "fine", "PERMISSION_DENIED on bucket",
            "d\u00e9j\u00e0 vu: quota exceeded"]),  # not ASCII: its page is searched line by line
    }
    marks = failure_scan.reporting(scan)
    assert marks == {key: failures.reporting([row[5] for row in rows])
                     for key, rows in scan.items()}
    assert marks == {(1, 1, "workerpool0-0"): {1, 3}, (1, 1, "workerpool1-0"): set(),
                     (2, 1, "workerpool0-0"): {0, 2, 3}}
