"""Fixtures the cost tests share with the page, composer and survival tests: users and teams,
the scripted backend, jobs made through the lifecycle, the Slack recorder, the real stack."""

from tests.runs.conftest import (  # noqa: F401
    admin_user,
    eager,
    make_job,
    slack,
)
from tests.runs.pages.conftest import member, member_client  # noqa: F401
