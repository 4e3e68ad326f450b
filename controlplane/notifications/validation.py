"""Checks shared by the channel form and the API serializer."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from controlplane.notifications import options
from controlplane.notifications.models import NotifyOn

_WEBHOOK = re.compile(r"https://hooks\.slack\.com/[A-Za-z0-9/_-]{10,500}")


def webhook_url_problem(url: str) -> str | None:
    """Why a webhook URL is refused, or None. Only Slack's own webhook host is accepted, so a
    stored URL can never make the workers post somewhere else."""
    url = url.strip()
    if not _WEBHOOK.fullmatch(url):
        # Checked on the text itself: urlsplit silently drops tabs and line breaks, so a URL
        # carrying CR/LF would otherwise pass and break (and leak into) every send.
        return ("a Slack incoming webhook URL is https://hooks.slack.com/services/ followed by "
                "letters, digits, '/', '_' or '-' only (no spaces or control characters)")
    parts = urlsplit(url)
    if not url.startswith(options.WEBHOOK_PREFIX) or parts.scheme != "https" or \
            parts.netloc != "hooks.slack.com" or parts.username or parts.password:
        return "only Slack incoming webhook URLs (https://hooks.slack.com/...) are accepted"
    if len(parts.path.strip("/")) < 10 or parts.query or parts.fragment:
        return "this is not a complete Slack webhook URL (https://hooks.slack.com/services/...)"
    return None


def bot_token_problem(token: str) -> str | None:
    token = token.strip()
    if not token.startswith(("xoxb-", "xoxp-")) or len(token) < 20 or not (
            token.isascii() and token.isprintable()) or any(c.isspace() for c in token):
        return "a Slack bot token starts with xoxb- (or a user token with xoxp-)"
    return None


def notify_on_problem(values: list[str]) -> str | None:
    unknown = sorted(set(values) - set(NotifyOn.values))
    if unknown:
        return f"unknown event(s) {', '.join(unknown)}; valid: {', '.join(NotifyOn.values)}"
    if not values:
        return "choose at least one event"
    return None
