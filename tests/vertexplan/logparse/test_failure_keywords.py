"""The failure rules' keyword pre-check passes over no line a rule would match."""

from __future__ import annotations

import pytest

from vertexplan.logparse import failures


def alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a regular expression (split at | outside groups)."""
    out, depth, current = [], 0, ""
    for char in pattern:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "|" and depth == 0:
            out.append(current)
            current = ""
        else:
            current += char
    return [*out, current]


@pytest.mark.parametrize(("kind", "pattern"), failures._RULES)
def test_each_alternative_holds_a_keyword(kind: str, pattern: str) -> None:
    for alternative in alternatives(pattern):
        # The literal text of the alternative, as the regex must find it in a line.
        assert any(word in alternative.lower() for word in failures.KEYWORDS), (
            f"{kind}: {alternative!r} holds none of failures.KEYWORDS")


@pytest.mark.parametrize("line", [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "[E ProcessGroupNCCL.cpp:475] Watchdog caught collective operation timeout",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp",
    "The replica workerpool0-0 exited with a non-zero status of 137.",
    "Quota exceeded for quota metric 'Custom model training A100 GPUs'",
    "Failed to pull image us-docker.pkg.dev/p/r/i:1: manifest unknown",
    "PERMISSION_DENIED: Permission 'storage.objects.get' denied on resource",
])
def test_known_failures_still_classify(line: str) -> None:
    assert failures.classify_line(line) is not None
    assert failures.classify_line(line.upper()) is not None


def test_an_ordinary_line_is_nothing() -> None:
    assert failures.classify_line("[rank3] iteration 12: batch of 64, prefetch ok") is None
