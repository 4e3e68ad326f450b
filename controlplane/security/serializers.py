"""API serializers for tokens and the audit log; fields listed explicitly."""

from __future__ import annotations

from rest_framework import serializers

from controlplane.security.models import ApiToken, AuditEntry


class TokenSerializer(serializers.ModelSerializer):
    active = serializers.BooleanField(read_only=True)
    teams = serializers.ListField(
        child=serializers.SlugField(), required=False, source="team_slugs",
        help_text="Slugs of the teams the token may act in (some of yours); empty: all of them "
                  "(from a narrowed token: all of that token's teams).")
    all_teams = serializers.BooleanField(
        read_only=True, help_text="True: every team of the user, now and later.")
    read_only = serializers.BooleanField(
        required=False, default=False,
        help_text="At most a viewer's rights in those teams, e.g. for a dashboard.")

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created_at", "last_used_at", "expires_at",
                  "revoked_at", "active", "teams", "all_teams", "read_only"]
        read_only_fields = ["id", "prefix", "created_at", "last_used_at", "revoked_at",
                            "active", "all_teams"]


class NewTokenSerializer(TokenSerializer):
    key = serializers.CharField(read_only=True, help_text="Shown once: store it now.")

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "key"]
        read_only_fields = [*TokenSerializer.Meta.read_only_fields, "key"]


class AuditEntrySerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_name", read_only=True)
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = AuditEntry
        fields = ["id", "at", "actor", "team", "action", "target_type", "target_id",
                  "target_name", "via", "detail"]
        read_only_fields = fields
