"""Text from users (job and team names, errors, log lines) made inert in Slack's mrkdwn.

Slack reads ``<...>`` as a link, a mention or a broadcast (``<!channel>``, ``<@U123>``,
``<https://evil|click>``), and asks senders to escape exactly three characters for that
(https://api.slack.com/reference/surfaces/formatting#escaping): ``&`` ``<`` ``>``; with them
escaped no value can link, mention or broadcast. Control characters become spaces so a value
stays on its line (a traceback in a note keeps its line breaks).
"""

from __future__ import annotations

import unicodedata

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape(value: object, *, limit: int | None = None, multiline: bool = False) -> str:
    """Any value as mrkdwn text that shows as written and links or mentions nothing."""
    text = str(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    out = []
    for ch in text:
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif multiline and ch == "\n":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def plain(value: object) -> str:
    """For the notification's plain-text fallback: no markup, no entities, one line, no
    ``<!channel>`` (clients read the fallback as mrkdwn in some places, e.g. notifications)."""
    return "".join(
        _ENTITIES.get(ch, " " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch)
        for ch in str(value))
