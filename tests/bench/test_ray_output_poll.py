"""bench.ray_output_poll: the output it makes holds what the readers must carry over from one
poll to the next (tracebacks, steps, checkpoints, ranks), its check of the read-on against the
whole read catches a reader that carries nothing over, and its last line gives both readers'
figures beside the whole read's."""

from __future__ import annotations

import random
import re

import pytest

from bench import ray_output_poll
from vertexplan.clusters import ray_logs


def test_the_output_has_what_a_poll_must_carry_over() -> None:
    output = ray_output_poll.Output(random.Random(3))
    output.grow(3000)
    assert len(output.lines) == 3000
    read = ray_logs.lines(output.text())
    summary = ray_logs.summary(output.text())
    assert any(line.text.endswith("Traceback (most recent call last):") for line in read)
    assert {line.severity for line in read} >= {ray_logs.INFO, ray_logs.ERROR,
                                                 ray_logs.LEVELS["WARNING"]}
    assert len(summary["loss"]) > 500 and summary["checkpoints"] and summary["ranks"]


def inside_a_traceback(seed: int) -> tuple[ray_output_poll.Output, int]:
    """An output whose last line is a traceback's second, and how many lines it has."""
    output = ray_output_poll.Output(random.Random(seed))
    while not (len(output.lines) > 1 and output.lines[-2].endswith("(most recent call last):")):
        output.grow(1)
    return output, len(output.lines)


def test_a_poll_that_begins_inside_a_traceback_reads_as_the_whole(monkeypatch) -> None:
    output, stored = inside_a_traceback(seed=11)
    before = ray_logs.summary(output.text())
    output.grow(5)
    done = ray_output_poll.poll(output.text(), stored, before)
    assert done.same and done.stored == stored + 5
    # A reader that forgot the traceback begun before its first line: the check sees it.
    monkeypatch.setattr(ray_logs, "_traceback_runs_on", lambda raws, count: False)
    assert not ray_output_poll.poll(output.text(), stored, before).same


def test_the_last_line_gives_both_readers_beside_the_whole_read(capsys) -> None:
    assert ray_output_poll.main(["--lines", "2000", "--new", "7", "--polls", "30"]) == 0
    out = capsys.readouterr().out
    assert "2,210 lines" in out
    figure = r"(\d+\.\d) ms vs (\d+\.\d) ms \((\d+\.\d{3}) x\)"
    found = re.fullmatch(f"lines {figure}, summary {figure}", out.strip().splitlines()[-1])
    assert found, out


@pytest.mark.parametrize("flag", ["--lines", "--new", "--polls"])
def test_counts_must_be_positive(flag, capsys) -> None:
    with pytest.raises(SystemExit):
        ray_output_poll.main([flag, "0"])
    assert f"{flag.split()[0]}" in capsys.readouterr().err
