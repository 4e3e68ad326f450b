"""The shortcuts of the failure scan and the parser give the same answers as the long way:
lines passed over are exactly those that could not have reported anything."""

from __future__ import annotations

from datetime import UTC, datetime

from vertexplan.logparse import events, failures
from vertexplan.logparse.entries import LogEntry

LINES = [
    "[rank0] iteration 1: batch ok",
    "Traceback (most recent call last):",
    '  File "train.py", line 3, in step',
    "    loss.backward()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "epoch 2 done",
    "exit code 137",
    "m\u00e9moire pleine: NCCL error",     # not ASCII: searched line by line
    "first line\nsecond line: quota exceeded",        # a message holding a newline
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "x.py", line 9, in f',
    "[rank1]: ValueError: bad shape",
    "PERMISSION_DENIED on bucket",
]


def test_reporting_finds_the_lines_may_report_finds() -> None:
    expected = {i for i, line in enumerate(LINES) if failures.may_report(line)}
    assert failures.reporting(LINES) == expected
    ascii_only = [line for line in LINES if line.isascii()]
    assert failures.reporting(ascii_only) == {
        i for i, line in enumerate(ascii_only) if failures.may_report(line)}
    assert failures.reporting(["all quiet", "nothing here"]) == set()


def test_the_scanner_reports_what_the_full_scan_reports() -> None:
    # Every line through _Stream, bypassing the shortcut, against feed() with it.
    slow = failures.TracebackScanner()
    slow_found = []
    for line in LINES:
        prefix = failures._RANK_PREFIX.match(line)
        key = prefix.group(0).strip() if prefix else ""
        stream = slow._streams.setdefault(key, failures._Stream())
        found = stream.feed(line[prefix.end():] if prefix else line)
        if found is not None:
            slow_found.append(found)
    assert failures.scan(LINES) == slow_found
    assert [f.kind for f in slow_found] == ["gpu_oom", "host_oom", "nccl_error",
                                            "quota_exceeded", "python_traceback",
                                            "permission_denied"]


def test_plain_line_is_what_parse_makes_of_a_plain_line() -> None:
    at = datetime(2026, 11, 1, tzinfo=UTC)
    for text in ("hello\n", "", "Restarting replica workerpool0-0", "  indented"):
        entry = LogEntry("i", at, 200, "1", "workerpool0-0", text_payload=text)
        parsed = events.parse(entry)
        message = events.plain_line(entry)
        if parsed.event is None:
            assert message == parsed.message and parsed.scan
        else:
            assert message is None
    step = LogEntry("j", at, 200, "1", "workerpool0-0", json_payload={"event": "step"})
    assert events.plain_line(step) is None
