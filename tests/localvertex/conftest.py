"""Fixtures that run the emulator as a real subprocess (see helpers.py); every one started is
stopped, with any replica it left, when its fixture ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.localvertex.helpers import FAST_FLAGS, EmulatorProcess


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorProcess]:
    """One emulator shared by the tests (unlimited logging quota, 2 restarts per replica)."""
    emu = EmulatorProcess(
        tmp_path_factory.mktemp("lv") / "data", [*FAST_FLAGS, "--logging-quota-per-minute", "0"]
    )
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture
def start_emulator(tmp_path: Path) -> Iterator[Callable[..., EmulatorProcess]]:
    """Start emulators with extra flags; all are stopped after the test."""
    started: list[EmulatorProcess] = []

    def start(*flags: str, name: str = "data") -> EmulatorProcess:
        emu = EmulatorProcess(tmp_path / name, [*FAST_FLAGS, *flags])
        started.append(emu)
        emu.start()
        return emu

    yield start
    for emu in started:
        emu.stop()
