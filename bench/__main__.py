"""`python -m bench [NAME ...]`: run the benchmarks (all of them, or those named) in turn.

Each benchmark is a module in this package with a `main()` that prints its figures; they are
run as separate processes so one benchmark's threads and memory never skew the next.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path


def available() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))


def main(argv: list[str]) -> int:
    names = argv or available()
    unknown = sorted(set(names) - set(available()))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available())}")
        return 2
    failed = 0
    for name in names:
        print(f"== bench.{name}", flush=True)
        failed += subprocess.call([sys.executable, "-m", f"bench.{name}"]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
