"""API serializers of jobs as they run. Fields are listed explicitly: nothing is exposed by
accident."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.runs import panels
from controlplane.runs.models import Job, JobAttempt, JobEvent


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
    cost = serializers.SerializerMethodField(
        help_text="Integer micro-dollars: billed so far (final once ended), lost to "
                  "preemptions, the estimate, per attempt, line and preemption.")

    class Meta:
        model = Job
        fields = ["id", "url", "team", "name", "state", "state_changed_at", "error_message",
                  "attempt", "restarts", "created_by", "created_at", "started_at", "ended_at",
                  "last_step", "total_steps", "last_loss", "region", "request", "custom_job",
                  "attempts", "cost"]
        read_only_fields = fields

    def get_cost(self, job: Job) -> dict[str, Any] | None:
        # The costs app reports it (runs knows nothing of prices): see panels.register_report.
        return panels.report("cost", job)


class JobListSerializer(JobSerializer):
    class Meta(JobSerializer.Meta):
        fields = ["id", "url", "team", "name", "state", "attempt", "restarts", "created_by",
                  "created_at", "started_at", "ended_at", "last_step", "total_steps", "last_loss",
                  "cost_micros", "lost_micros", "estimate_micros"]
        read_only_fields = fields


class EventSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobEvent
        fields = ["kind", "attempt", "timestamp", "replica", "step", "data"]
        read_only_fields = fields
