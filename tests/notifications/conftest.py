"""The job and Slack fixtures the notification tests share with the runs tests."""

from tests.runs.conftest import (  # noqa: F401
    admin_user,
    eager,
    make_job,
    slack,
)
