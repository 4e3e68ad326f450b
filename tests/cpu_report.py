"""`--cpu-report N`: the N test files that cost the most CPU, at the end of the run.

On two loaded cores a test's wall time (`--durations`) says as much about what ran beside it as
about the test; the suite's length is what all its processes ask of the CPUs. So each test's
CPU seconds are taken from its process and from the children it has reaped (the trainers it
ran; a stack's web, worker, beat and emulator processes, with their replicas, when the stack is
stopped, so in the last test of the fixture's scope), sent with the test's report (xdist
carries user_properties to the controller) and summed per file.
"""

from __future__ import annotations

import resource
from collections import defaultdict
from collections.abc import Iterator

import pytest

_KEY = "cpu_s"
_started = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-report", type=int, default=0, metavar="N",
                     help="print the N test files that took the most CPU seconds (their "
                          "processes and the children they reaped)")


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not item.config.getoption("cpu_report"):
        yield
        return
    item.stash[_started] = _cpu_s()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    if call.when != "teardown" or _started not in item.stash:
        return
    # Setup, call and teardown together, in the teardown's report (the last of the three).
    outcome.get_result().user_properties.append((_KEY, _cpu_s() - item.stash[_started]))


class _Totals:
    def __init__(self) -> None:
        self.by_file: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == _KEY:
                self.by_file[report.nodeid.split("::", 1)[0]] += value

    def pytest_terminal_summary(self, terminalreporter, config: pytest.Config) -> None:
        count = config.getoption("cpu_report")
        total = sum(self.by_file.values())
        terminalreporter.write_sep("=", f"CPU seconds by test file (top {count}, "
                                        f"{total:.0f} s in all)")
        for path, seconds in sorted(self.by_file.items(), key=lambda kv: -kv[1])[:count]:
            terminalreporter.write_line(f"{seconds:8.1f} s {seconds / total:6.1%}  {path}")


def pytest_configure(config: pytest.Config) -> None:
    # Summed where the reports all arrive: the controller of an xdist run, or the only process.
    if config.getoption("cpu_report") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Totals(), "cpu-report-totals")
