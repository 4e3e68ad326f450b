"""REST API for a team's Slack channels. Secrets are write-only: responses carry a hint."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from rest_framework import generics, serializers
from rest_framework.exceptions import PermissionDenied

from controlplane.core.idempotency import idempotent
from controlplane.notifications import validation
from controlplane.notifications.models import ChannelKind, NotifyOn, SlackChannel
from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams.models import Role, Team


class ChannelSerializer(serializers.ModelSerializer):
    webhook_url = serializers.CharField(write_only=True, required=False, allow_blank=True)
    bot_token = serializers.CharField(write_only=True, required=False, allow_blank=True)
    notify_on = serializers.ListField(child=serializers.ChoiceField(choices=NotifyOn.choices))

    class Meta:
        model = SlackChannel
        fields = ["id", "name", "kind", "webhook_url", "bot_token", "slack_channel", "notify_on",
                  "enabled", "secret_hint", "disabled_reason", "disabled_at", "created_at",
                  "last_sent_at"]
        read_only_fields = ["id", "secret_hint", "disabled_reason", "disabled_at", "created_at",
                            "last_sent_at"]

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        instance: SlackChannel | None = self.instance
        kind = data.get("kind", instance.kind if instance else None)
        new_kind = instance is None or kind != instance.kind
        errors: dict[str, list[str]] = {}
        if kind == ChannelKind.WEBHOOK:
            url = data.get("webhook_url", "")
            if url or new_kind:
                problem = validation.webhook_url_problem(url)
                if problem:
                    errors["webhook_url"] = [problem]
        elif kind == ChannelKind.BOT:
            token = data.get("bot_token", "")
            if token or new_kind:
                problem = validation.bot_token_problem(token)
                if problem:
                    errors["bot_token"] = [problem]
            if not data.get("slack_channel", instance.slack_channel if instance else ""):
                errors["slack_channel"] = ["the channel to post to, e.g. #training or C0123"]
        if "notify_on" in data:
            problem = validation.notify_on_problem(list(data["notify_on"]))
            if problem:
                errors["notify_on"] = [problem]
        if errors:
            raise serializers.ValidationError(errors)
        return data

    def _store(self, channel: SlackChannel, data: dict[str, Any]) -> SlackChannel:
        url, token = data.pop("webhook_url", ""), data.pop("bot_token", "")
        kind = data.get("kind", channel.kind)
        secret = (url if kind == ChannelKind.WEBHOOK else token).strip()
        for key, value in data.items():
            setattr(channel, key, value)
        if secret:
            channel.set_secret(secret)
        if data.get("enabled"):
            channel.disabled_reason, channel.disabled_at = "", None
        channel.save()
        return channel

    def create(self, validated_data: dict[str, Any]) -> SlackChannel:
        return self._store(SlackChannel(), validated_data)

    def update(self, instance: SlackChannel, validated_data: dict[str, Any]) -> SlackChannel:
        return self._store(instance, validated_data)


class _TeamChannels:
    """Members see a team's channels; only its admins change them."""

    request: Any
    kwargs: dict[str, Any]

    def team(self) -> Team:
        return get_object_or_404(access.teams_of(self.request.user), slug=self.kwargs["team"])

    def get_queryset(self) -> QuerySet[SlackChannel]:
        return SlackChannel.objects.filter(team=self.team())

    def check_admin(self, team: Team) -> None:
        if access.role_in(self.request.user, team) != Role.ADMIN:
            raise PermissionDenied("only the team's admins manage its Slack channels")

    def check_name(self, team: Team, name: str | None, pk: int | None = None) -> None:
        if name and SlackChannel.objects.filter(team=team, name=name).exclude(pk=pk).exists():
            raise serializers.ValidationError({"name": ["this team has a channel of that name"]})


@idempotent
class ChannelList(_TeamChannels, generics.ListCreateAPIView):
    serializer_class = ChannelSerializer

    def perform_create(self, serializer: ChannelSerializer) -> None:
        team = self.team()
        self.check_admin(team)
        self.check_name(team, serializer.validated_data.get("name"))
        channel = serializer.save(team=team, created_by=self.request.user)
        audit.record(self.request, "channel.create", channel)


class ChannelDetail(_TeamChannels, generics.RetrieveUpdateDestroyAPIView):
    serializer_class = ChannelSerializer

    def perform_update(self, serializer: ChannelSerializer) -> None:
        self.check_admin(serializer.instance.team)
        self.check_name(serializer.instance.team, serializer.validated_data.get("name"),
                        serializer.instance.pk)
        channel = serializer.save()
        audit.record(self.request, "channel.update", channel,
                     detail={"fields": sorted(serializer.validated_data)})

    def perform_destroy(self, instance: SlackChannel) -> None:
        self.check_admin(instance.team)
        audit.record(self.request, "channel.delete", instance)
        instance.delete()
