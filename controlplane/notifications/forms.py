"""The channel form: a webhook URL or a bot token is write-only (blank keeps the stored one)."""

from __future__ import annotations

from typing import Any

from django import forms

from controlplane.notifications import validation
from controlplane.notifications.models import DEFAULT_NOTIFY_ON, ChannelKind, NotifyOn, SlackChannel


class ChannelForm(forms.ModelForm):
    webhook_url = forms.CharField(
        required=False, label="Webhook URL", widget=forms.PasswordInput(render_value=False),
        help_text="https://hooks.slack.com/services/...; stored encrypted, never shown again.")
    bot_token = forms.CharField(
        required=False, label="Bot token", widget=forms.PasswordInput(render_value=False),
        help_text="xoxb-...; with the channel below. Stored encrypted, never shown again.")
    notify_on = forms.MultipleChoiceField(choices=NotifyOn.choices, initial=DEFAULT_NOTIFY_ON,
                                          widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = SlackChannel
        fields = ["name", "kind", "slack_channel", "notify_on", "enabled"]
        labels = {"slack_channel": "Channel (bot only)"}

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        taken = SlackChannel.objects.filter(team_id=self.instance.team_id, name=name)
        if taken.exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError("this team has a channel of that name")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        kind = data.get("kind")
        creating = self.instance.pk is None or self.instance.kind != kind
        if kind == ChannelKind.WEBHOOK:
            url = (data.get("webhook_url") or "").strip()
            if url or creating:
                problem = validation.webhook_url_problem(url)
                if problem:
                    self.add_error("webhook_url", problem)
        elif kind == ChannelKind.BOT:
            token = (data.get("bot_token") or "").strip()
            if token or creating:
                problem = validation.bot_token_problem(token)
                if problem:
                    self.add_error("bot_token", problem)
            if not (data.get("slack_channel") or "").strip():
                self.add_error("slack_channel", "the channel to post to, e.g. #training or C0123")
        return data

    def save(self, commit: bool = True) -> SlackChannel:
        channel: SlackChannel = super().save(commit=False)
        secret = (self.cleaned_data.get("webhook_url") if channel.kind == ChannelKind.WEBHOOK
                  else self.cleaned_data.get("bot_token")) or ""
        if secret.strip():
            channel.set_secret(secret.strip())
        if channel.enabled:
            # Turned back on by a person who fixed what disabled it.
            channel.disabled_reason, channel.disabled_at = "", None
        if commit:
            channel.save()
        return channel
