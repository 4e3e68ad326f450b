"""Slack notifications: per-team channels, one message per job transition, never two.

models.py    SlackChannel (encrypted webhook URL or bot token) and Notification (the outbox)
crypto.py    Fernet encryption of the secrets, keyed from CP_ENCRYPTION_KEY or SECRET_KEY
slack.py     the transport (slack_sdk): permanent errors disable a channel, transient ones retry
messages.py  Block Kit for a notification
service.py   what to send when (called from Job.update_state and the lifecycle) and delivery
"""
