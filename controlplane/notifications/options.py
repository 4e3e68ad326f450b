"""The notification settings: Django settings when present (tests override them), else the
environment. Read at import, so a bad value stops the process at start."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from controlplane.core.env import envfloat, envint, envurl

# Only Slack's own webhook host is accepted for stored URLs.
WEBHOOK_PREFIX = "https://hooks.slack.com/"

_DEFAULTS: dict[str, Any] = {
    # Where webhook posts and Web API calls go. Tests point these at a local recorder; a stored
    # webhook URL is always https://hooks.slack.com/..., and only its path is reused.
    "CP_SLACK_WEBHOOK_BASE_URL": envurl("CP_SLACK_WEBHOOK_BASE_URL", WEBHOOK_PREFIX,
                                        ("https", "http")),
    "CP_SLACK_API_URL": envurl("CP_SLACK_API_URL", "https://slack.com/api/", ("https", "http")),
    "CP_SLACK_TIMEOUT_S": envfloat("CP_SLACK_TIMEOUT_S", 10.0, minimum=0.5),
    # A transient failure is retried this many times, with backoff, then given up.
    "CP_NOTIFY_MAX_TRIES": envint("CP_NOTIFY_MAX_TRIES", 8, minimum=1),
}
for _name in ("CP_SLACK_WEBHOOK_BASE_URL", "CP_SLACK_API_URL"):
    if not _DEFAULTS[_name].endswith("/"):
        raise ImproperlyConfigured(f"{_name}={_DEFAULTS[_name]!r} must end with '/'")


def get(name: str) -> Any:
    return getattr(settings, name, _DEFAULTS[name])
