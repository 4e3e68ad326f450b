"""The Python-SDK importer against an import bomb (issue 40, door 6): nested list names, each
level 16 uses of the one before, so a few hundred bytes name 16**levels values.

    python -m bench.import_bomb [--levels 6] [--repeat 5]

Each row is one file through ``vertexplan.interop.import_text`` (what POST /api/v1/jobs/import/
runs on the text; the request's own overhead is not in it), the best of --repeat runs: the
bomb at 1..--levels levels, and the largest file the importer still accepts, one that copies
exactly MAX_VALUES values from names (a 99-value pool used 100 times). The goal: a refusal in
under 100 ms.
"""

from __future__ import annotations

import argparse
import time

from bench.machine import machine
from vertexplan.interop import ImportFailed, import_text
from vertexplan.interop.python_sdk import MAX_VALUES

GOAL_S = 0.100


def bomb(levels: int) -> str:
    lines = ["l0 = [0]\n"]
    lines += [f"l{i} = [{', '.join([f'l{i - 1}'] * 16)}]\n" for i in range(1, levels + 1)]
    lines.append(f"job = {{'workerPoolSpecs': [{{'replicaCount': 1, 'x': l{levels}}}]}}\n")
    return "".join(lines)


def at_the_bound() -> str:
    """A file whose names copy exactly MAX_VALUES values: the largest one accepted."""
    width = int(MAX_VALUES ** 0.5)
    return (f"p = [{', '.join(['0'] * (width - 1))}]\n"
            f"job = {{'workerPoolSpecs': [{{'replicaCount': 1, 'x': "
            f"[{', '.join(['p'] * (MAX_VALUES // width))}]}}]}}\n")


def timed(text: str, repeat: int) -> tuple[str, float]:
    best, outcome = float("inf"), ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            import_text(text, region="us-central1")
            outcome = "accepted"
        except ImportFailed:
            outcome = "refused"
        best = min(best, time.perf_counter() - start)
    return outcome, best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--levels", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{machine()}; MAX_VALUES {MAX_VALUES}; goal: refused in {GOAL_S * 1000:.0f} ms")
    print(f"{'file':<28} {'bytes':>6} {'values named':>13} {'outcome':>9} {'ms':>8} "
          f"{'/ goal':>7}")
    rows = [(f"bomb, {n} level{'s' if n > 1 else ''}", bomb(n), 16 ** n)
            for n in range(1, args.levels + 1)]
    rows.append(("largest accepted", at_the_bound(), MAX_VALUES))
    for label, text, values in rows:
        outcome, seconds = timed(text, args.repeat)
        print(f"{label:<28} {len(text):>6} {values:>13,} {outcome:>9} "
              f"{seconds * 1000:>8.2f} {seconds / GOAL_S:>7.3f}")


if __name__ == "__main__":
    main()
