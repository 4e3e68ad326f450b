"""API serializers. Fields are listed explicitly: nothing is exposed by accident."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from jobs.composer import STRATEGIES
from jobs.models import Job, JobAttempt, JobEvent, LogLine, StepMetric


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know, so a typo is an error instead of a silent default."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {key: [f"unknown field; valid fields: {', '.join(sorted(self.fields))}"]
                     for key in unknown})
        return super().to_internal_value(data)


class PoolSerializer(StrictSerializer):
    machine_type = serializers.CharField(required=False, allow_blank=True, max_length=64)
    accelerator_type = serializers.CharField(required=False, allow_blank=True, max_length=64)
    accelerator_count = serializers.IntegerField(required=False, min_value=0)
    boot_disk_type = serializers.CharField(required=False, allow_blank=True, max_length=32)
    boot_disk_size_gb = serializers.IntegerField(required=False)
    replica_count = serializers.IntegerField(required=False)


class JobRequestSerializer(StrictSerializer):
    """The compose form's fields as JSON."""

    team = serializers.SlugField(required=False,
                                 help_text="Team slug; optional when you belong to one team.")
    name = serializers.CharField(max_length=100)
    region = serializers.CharField(required=False, max_length=40,
                                   help_text=f"Default: {settings.VERTEX_REGION}")
    strategy = serializers.ChoiceField(choices=sorted(STRATEGIES), default="ddp")
    spot = serializers.BooleanField(default=False)
    image_uri = serializers.CharField(required=False, allow_blank=True, max_length=512)
    command = serializers.ListField(child=serializers.CharField(), required=False,
                                    help_text="Empty: the built-in trainer launcher.")
    args = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    env = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False)
    chief = PoolSerializer()
    workers = PoolSerializer(required=False, allow_null=True,
                             help_text="Absent or null: no workers pool.")
    restart_job_on_worker_restart = serializers.BooleanField(required=False, allow_null=True,
                                                             default=None)
    timeout_hours = serializers.FloatField(required=False, min_value=0.01, max_value=24 * 7)


class AttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobAttempt
        fields = ["number", "display_name", "vertex_name", "vertex_state", "submitted_at",
                  "started_at", "ended_at", "error_message"]


class JobSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    attempts = AttemptSerializer(many=True, read_only=True)
    url = serializers.HyperlinkedIdentityField(view_name="api-job-detail")

    class Meta:
        model = Job
        fields = ["id", "url", "team", "name", "state", "state_changed_at", "error_message",
                  "attempt", "restarts", "created_by", "created_at", "started_at", "ended_at",
                  "last_step", "total_steps", "last_loss", "region", "request", "custom_job",
                  "attempts"]
        read_only_fields = fields


class JobListSerializer(JobSerializer):
    class Meta(JobSerializer.Meta):
        fields = ["id", "url", "team", "name", "state", "attempt", "restarts", "created_by",
                  "created_at", "started_at", "ended_at", "last_step", "total_steps", "last_loss"]
        read_only_fields = fields


class EventSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobEvent
        fields = ["kind", "attempt", "timestamp", "replica", "step", "data"]
        read_only_fields = fields


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = StepMetric
        fields = ["attempt", "step", "timestamp", "loss", "lr", "tokens_per_s", "step_time_s"]
        read_only_fields = fields


class LogLineSerializer(serializers.ModelSerializer):
    class Meta:
        model = LogLine
        fields = ["attempt", "timestamp", "severity", "replica", "message", "insert_id"]
        read_only_fields = fields
