"""What machine a benchmark ran on, for the figures it prints."""

from __future__ import annotations

import os
import platform
import subprocess


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
