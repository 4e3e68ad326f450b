"""The real stack with short recovery backoffs and a Slack recorder (tests/runs/conftest.py
builds it), for the chaos, restart, spot-recovery and preemption-cost tests."""

from tests.runs.conftest import (  # noqa: F401
    recorder,
    survival_api,
    survival_seeded,
    survival_stack,
)
