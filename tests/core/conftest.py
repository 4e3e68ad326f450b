"""Teams, users of every role and their tokens: the security tests' world."""

from tests.security.conftest import token_client, world  # noqa: F401
