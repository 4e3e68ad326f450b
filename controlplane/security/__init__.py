"""API tokens (several per user, stored hashed), the audit log, and the API's rate limits."""
