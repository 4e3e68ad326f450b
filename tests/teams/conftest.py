"""Teams, users of every role and their tokens: the security tests' world."""

from tests.security.conftest import world  # noqa: F401
