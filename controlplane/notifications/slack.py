"""Posting to Slack with slack_sdk, and telling permanent errors from transient ones.

A permanent error (a revoked webhook, a channel that is gone, a bad token) disables the channel
with the reason shown to the team; a transient one (rate limit, Slack's 5xx, the network) is
retried later by the caller. slack_sdk's own retry handlers are turned off: a retried POST that
Slack had in fact received would post twice, and retries are the outbox's decision.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.webhook import WebhookClient

from controlplane.notifications import options, validation
from controlplane.notifications.models import ChannelKind, SlackChannel

logger = logging.getLogger(__name__)

# Webhook answers (https://api.slack.com/messaging/webhooks#handling_errors) and Web API error
# codes that will not get better by trying again: the channel's configuration is wrong.
PERMANENT_ERRORS = frozenset({
    "invalid_token", "no_service", "no_service_id", "no_team", "team_disabled",
    "action_prohibited", "channel_not_found", "channel_is_archived", "is_archived",
    "no_active_hooks", "posting_to_general_channel_denied", "user_not_found",
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
    "not_in_channel", "missing_scope", "restricted_action", "ekm_access_denied",
    "org_login_required", "access_denied",
})
# Our message itself was refused: fail it, but the channel is fine.
MESSAGE_ERRORS = frozenset({"invalid_payload", "invalid_blocks", "invalid_blocks_format",
                            "msg_too_long", "no_text", "too_many_attachments"})


@dataclass
class TransportError(Exception):
    message: str
    permanent: bool = False
    disable_channel: bool = False
    retry_after_s: float | None = None

    def __str__(self) -> str:
        return self.message


def webhook_target(stored_url: str) -> str:
    """Where a stored https://hooks.slack.com/... URL is posted (a local recorder in tests)."""
    base = options.get("CP_SLACK_WEBHOOK_BASE_URL")
    return base + stored_url.removeprefix(options.WEBHOOK_PREFIX)


def send(channel: SlackChannel, text: str, blocks: list[dict[str, Any]]) -> None:
    """Post one message; raises TransportError."""
    if channel.kind == ChannelKind.WEBHOOK:
        _send_webhook(channel.get_secret(), text, blocks)
    else:
        _send_bot(channel.get_secret(), channel.slack_channel, text, blocks)


def _classify(status: int, error: str, headers: dict[str, Any]) -> TransportError:
    error = (error or "").strip()
    if status == 429 or error in ("rate_limited", "ratelimited"):
        retry_after = headers.get("retry-after") or headers.get("Retry-After")
        try:
            wait = float(retry_after) if retry_after else None
        except (TypeError, ValueError):
            wait = None
        return TransportError(f"Slack rate limit ({status} {error})", retry_after_s=wait)
    if error in PERMANENT_ERRORS or status in (403, 404, 410):
        return TransportError(f"Slack refused the channel: {status} {error}".strip(),
                              permanent=True, disable_channel=True)
    if error in MESSAGE_ERRORS or status == 400:
        return TransportError(f"Slack refused the message: {status} {error}".strip(),
                              permanent=True)
    return TransportError(f"Slack answered {status} {error}".strip())


def _scrubbed(exc: BaseException, *secrets: str) -> str:
    """An error's text without the secret it may quote (a webhook URL is a credential)."""
    text = f"{type(exc).__name__}: {exc}"
    for secret in secrets:
        if secret:
            text = text.replace(secret, "<webhook URL>")
            text = text.replace(secret.removeprefix(options.WEBHOOK_PREFIX), "<webhook URL>")
    return text[:500]


def _send_webhook(url: str, text: str, blocks: list[dict[str, Any]]) -> None:
    if validation.webhook_url_problem(url):
        # Stored before URLs were checked as strictly: never sent, never written to a log.
        raise TransportError("the stored webhook URL is not a valid Slack webhook URL: "
                             "add the channel again", permanent=True, disable_channel=True)
    target = webhook_target(url)
    client = WebhookClient(target, timeout=options.get("CP_SLACK_TIMEOUT_S"),
                           retry_handlers=[])
    try:
        response = client.send(text=text, blocks=blocks, unfurl_links=False)
    except (OSError, SlackClientError, ValueError, HTTPException) as exc:
        # Connection refused, timeout, DNS; a URL http.client refuses. The exception's text
        # can quote the URL, so it is scrubbed and not chained into the traceback.
        raise TransportError(f"cannot reach Slack: {_scrubbed(exc, url, target)}") from None
    if response.status_code == 200:
        return
    raise _classify(response.status_code, response.body, dict(response.headers or {}))


def _send_bot(token: str, slack_channel: str, text: str, blocks: list[dict[str, Any]]) -> None:
    client = WebClient(token=token, base_url=options.get("CP_SLACK_API_URL"),
                       timeout=options.get("CP_SLACK_TIMEOUT_S"), retry_handlers=[])
    try:
        client.chat_postMessage(channel=slack_channel, text=text, blocks=blocks,
                                unfurl_links=False)
    except SlackApiError as exc:
        response = exc.response
        raise _classify(response.status_code, str(response.get("error", "")),
                        dict(response.headers or {})) from exc
    except (OSError, SlackClientError, ValueError, HTTPException) as exc:
        raise TransportError(f"cannot reach Slack: {_scrubbed(exc, token)}") from None
