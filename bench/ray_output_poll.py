"""What one poll of a long Ray job's output costs the worker: reading on from what is stored,
beside reading the whole output again. No processes, no database.

    python -m bench.ray_output_poll [--lines 100000] [--new 10] [--polls 20] [--seed 5]

Ray's Job API gives a job's whole output at every poll (once a second), so the poll's two
readers (vertexplan.clusters.ray_logs) are asked to read on: `lines(text, after=stored)` for
the log store and `summary(text, after=stored, before=summary)` for the loss curve, the ranks
and the checkpoints. The output is made as a Ray Train job prints it: each line forwarded with
its worker's prefix, the trainer's event lines (a step every few lines, a checkpoint now and
then), logging lines at each level, Python warnings and tracebacks, some in terminal colours.

Each poll adds `--new` lines to an output of `--lines`; timed, best of `--polls`:
  read on    what the poll runs now: the readers from the stored count
  whole      the same readers over the whole output (what a poll ran before)
printed as milliseconds and as the ratio read on / whole. Each poll's read-on results are
checked against the whole read's last lines (a bench that measured a wrong answer would be
worth nothing): a difference ends the run with status 1.
The last line reads `lines X ms vs Y ms (R x), summary X ms vs Y ms (R x)`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.machine import machine
from vertexplan.clusters import ray_logs

_WORKERS = ("(RayTrainWorker pid=4121, ip=10.0.0.2) ", "(RayTrainWorker pid=4122, ip=10.0.0.3) ",
            "(TrainController pid=3990) ", "")


class Output:
    """A Ray Train job's output as it grows: `grow` appends lines one at a time from what the
    trainer, the framework and Python print, so a poll may end inside a traceback, as Ray's
    reads do."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.step = 0
        self._pending: list[str] = []

    def grow(self, count: int) -> None:
        for _ in range(count):
            if not self._pending:
                self._pending = self._printed()
            self.lines.append(self._pending.pop(0))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def _printed(self) -> list[str]:
        """What one print of the job writes: a line, or a traceback's lines."""
        rng = self.rng
        prefix = rng.choice(_WORKERS)
        roll = rng.random()
        if roll < 0.3:
            self.step += 1
            event = {"event": "step", "step": self.step, "loss": round(2.5 / self.step ** 0.3, 5),
                     "rank": 0, "tokens_per_s": rng.randint(9000, 11000)}
            return [prefix + json.dumps(event)]
        if roll < 0.32:
            event = {"event": "checkpoint_saved", "step": self.step,
                     "path": f"gs://team-a/runs/7/checkpoints/step-{self.step}"}
            return [prefix + json.dumps(event)]
        if roll < 0.33:
            return [prefix + json.dumps({"event": "run_started", "rank": rng.randint(0, 7)})]
        if roll < 0.34:
            return [prefix + "Traceback (most recent call last):",
                    prefix + '  File "/app/train.py", line 88, in <module>',
                    prefix + "    loader = make_loader(shards)",
                    prefix + "ValueError: shard 17 is empty"]
        if roll < 0.36:
            return [prefix + "/app/train.py:41: UserWarning: TypedStorage is deprecated"]
        level = rng.choice(("INFO", "INFO", "INFO", "DEBUG", "WARNING", "ERROR"))
        line = f"{prefix}2026-12-01 10:{rng.randint(0, 59):02d}:00 {level} trainer: " \
               f"epoch {self.step // 500} shard {rng.randint(0, 255)} read"
        if rng.random() < 0.1:
            line = f"\x1b[36m{line}\x1b[0m"
        return [line]


@dataclass(frozen=True)
class Poll:
    """One poll's readers, read on and whole, in milliseconds; whether they agreed."""
    lines_ms: float
    lines_whole_ms: float
    summary_ms: float
    summary_whole_ms: float
    same: bool
    stored: int                # the output's lines, stored once this poll is done
    summary: dict[str, Any]    # the summary this poll stores


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    """How long `work` took, in milliseconds, and what it returned."""
    started = time.perf_counter()
    result = work()
    return (time.perf_counter() - started) * 1000, result


def poll(text: str, stored: int, before: dict[str, Any]) -> Poll:
    """What a poll of `text` runs with `stored` lines and their summary kept (the readers read
    on), beside the same readers over the whole output; whether both gave the same."""
    lines_ms, new = timed(lambda: ray_logs.lines(text, after=stored))
    lines_whole_ms, every = timed(lambda: ray_logs.lines(text))
    summary_ms, summary = timed(lambda: ray_logs.summary(text, after=stored, before=before))
    summary_whole_ms, whole_summary = timed(lambda: ray_logs.summary(text))
    same = new == every[stored:] and summary == whole_summary
    return Poll(lines_ms, lines_whole_ms, summary_ms, summary_whole_ms, same, len(every),
                summary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ray_output_poll")
    parser.add_argument("--lines", type=int, default=100_000,
                        help="lines in the output before the polls (default 100000)")
    parser.add_argument("--new", type=int, default=10, help="lines each poll adds (default 10)")
    parser.add_argument("--polls", type=int, default=20, help="polls timed (default 20)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    if args.lines < 1 or args.new < 1 or args.polls < 1:
        parser.error("--lines, --new and --polls must be positive")

    output = Output(random.Random(args.seed))
    output.grow(args.lines)
    text = output.text()
    stored, summary = len(output.lines), ray_logs.summary(text)
    polls: list[Poll] = []
    for _ in range(args.polls):
        output.grow(args.new)
        text = output.text()
        done = poll(text, stored, summary)
        if not done.same:
            print(f"the read-on differs from the whole read after line {stored}",
                  file=sys.stderr)
            return 1
        polls.append(done)
        stored, summary = done.stored, done.summary

    print(f"machine: {machine()}")
    print(f"output: {stored:,} lines ({len(text) / 1e6:.1f} MB), {args.new} new a poll, "
          f"best of {args.polls} polls")
    print(f"{'reader':>8} {'read on ms':>11} {'whole ms':>9} {'on / whole':>11}")
    figures = []
    best = {"lines": (min(p.lines_ms for p in polls), min(p.lines_whole_ms for p in polls)),
            "summary": (min(p.summary_ms for p in polls),
                        min(p.summary_whole_ms for p in polls))}
    for reader, (on, whole) in best.items():
        print(f"{reader:>8} {on:>11.1f} {whole:>9.1f} {on / whole:>11.3f}")
        figures.append(f"{reader} {on:.1f} ms vs {whole:.1f} ms ({on / whole:.3f} x)")
    print(", ".join(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
