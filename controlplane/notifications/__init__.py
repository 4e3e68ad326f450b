"""Slack notifications: per-team channels, one message per job transition or SLO alert, never
two, all through one outbox.

models.py    SlackChannel (encrypted webhook URL or bot token) and Notification (the outbox)
(secrets at rest are Fernet tokens: controlplane/core/secrets.py)
slack.py     the transport (slack_sdk): permanent errors disable a channel, transient ones retry
messages.py  Block Kit for a notification
receivers.py what the other apps' signals (a job's state, a restart, a budget, an SLO alert) send
service.py   what to send when (the outbox rows) and delivering them
"""
