"""`vcp login` without a terminal (a token piped in, a CI step, an IDE's console) reads the token
from standard input instead of a hidden prompt that falls back to echoing it with "Password
input may be echoed"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from config.ports import reserve_port


def test_a_piped_token_is_read_without_a_prompt_or_a_warning(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{reserve_port()}"  # nothing listens: the token is read, then sent
    done = subprocess.run(
        [sys.executable, "-m", "vcp.main", "login", "--server", closed], input="a-token\n",
        capture_output=True, text=True, timeout=60, start_new_session=True,  # no terminal
        env={"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin"})
    assert "could not be reached" in done.stderr, done.stderr
    assert "echoed" not in done.stderr and "Warning" not in done.stderr, done.stderr
    assert "API token" not in done.stdout + done.stderr
