"""The page tests' users, teams and fake backend, for the composer's API and page tests."""

from tests.runs.pages.conftest import (  # noqa: F401
    make_job,
    member,
    member_client,
    team_admin,
    team_admin_client,
    viewer,
    viewer_client,
)
from tests.sweeps.conftest import tuning_backend  # noqa: F401  (the sweep form)
