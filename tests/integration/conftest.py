"""The integration tests' browser. The stack they drive, and its fixtures (`stack`, `seeded`,
`api`), are tests/stacks.py's: one definition for every directory, so one stack a process."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require

# The browser tests drive the system's chromium (installed by .ci/run); Playwright's own
# download is never used.
CHROMIUM = os.environ.get("CP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium driven by Playwright; with CI=true a missing chromium fails.

    One per test module: Playwright's sync API keeps an asyncio loop running in the test's
    thread while it is open, and Django refuses database calls from such a thread. A module's
    browser closes before the next module's tests, which may use the database, run on its
    process."""
    require(Path(CHROMIUM).exists() or shutil.which("chromium") is not None,
            f"chromium is not installed at {CHROMIUM} (.ci/run installs Debian's)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                             headless=True)
        try:
            yield browser
        finally:
            browser.close()
