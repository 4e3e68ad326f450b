"""API serializers of jobs as they run. Fields are listed explicitly: nothing is exposed by
accident."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.core.serializers import StrictSerializer
from controlplane.runs import checkpoints, links, panels
from controlplane.runs.models import HealthState, Job, JobAttempt, JobEvent, JobState


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

    diagnosis = serializers.SerializerMethodField(
        help_text="A failed job's most telling failure, from its log and CustomJob.error: "
                  "kind, title, summary (the line that gave it away), fix, last_frame, "
                  "replica, attempt; null unless the job FAILED.")

    checkpoints = serializers.SerializerMethodField(
        help_text="The checkpoints that still exist (rotation's deletions left out), newest "
                  "first: step, path, attempt, saved_at. A resubmission may start from these.")

    links = serializers.SerializerMethodField(
        help_text="Where to look at the job beside this product, by name: console (the Vertex "
                  "console page), logs (Logs Explorer with the job's filter), errors (Error "
                  "Reporting), gpu_utilisation and gpu_memory (Cloud Monitoring), tensorboard "
                  "(when the job writes to one), experiment and experiment_run (Vertex "
                  "Experiments, when the job names them). Against the local emulator they are this "
                  "product's own pages. Empty before Vertex has given the job an id.")

    origin = serializers.SerializerMethodField(
        help_text="For a sweep's trial or a Ray job (kind trial or ray): what it is part of, "
                  "kind, label, url (its page) and api (its API record); null for a job.")

    health = serializers.ChoiceField(
        choices=HealthState.choices, read_only=True,
        help_text="What hang and straggler detection last concluded of the running job: ok, "
                  "suspected_hang (no step for longer than its team's hang rule allows) or "
                  "straggler (a rank persistently slower than the others).")
    health_detail = serializers.JSONField(
        read_only=True,
        help_text="Its figures: silent_s, threshold_s, p95_s and why for a suspected hang; "
                  "ranks, slowdown (rank -> times the median) and why for a straggler.")

    tracking = serializers.SerializerMethodField(
        help_text="Where the trainer said the run is tracked besides this product, from its "
                  "`tracking` events: provider (wandb, vertex_experiments, tensorboard) -> "
                  "an http(s) URL.")

    class Meta:
        model = Job
        # Also the fields controlplane/runs/detail_body.py writes the record from.
        fields = ["id", "url", "team", "name", "kind", "origin", "tags", "note", "state",
                  "state_changed_at", "error_message", "health", "health_detail",
                  "diagnosis", "quota_wait", "checkpoints", "links", "tracking",
                  "attempt", "restarts", "created_by", "created_at", "started_at", "ended_at",
                  "last_step", "total_steps", "last_loss", "region", "request", "custom_job",
                  "attempts", "cost"]
        read_only_fields = fields

    def get_checkpoints(self, job: Job) -> list[dict[str, Any]]:
        return checkpoints.listed(job)

    def get_links(self, job: Job) -> dict[str, str]:
        request = self.context.get("request")
        return {link.key: request.build_absolute_uri(link.url) if request else link.url
                for link in links.for_job(job)}

    def get_tracking(self, job: Job) -> dict[str, str]:
        return {link.key: link.url for link in links.tracking_for(job)}

    def get_origin(self, job: Job) -> dict[str, str] | None:
        return panels.origin(job)

    def get_diagnosis(self, job: Job) -> dict[str, Any] | None:
        return panels.report("diagnosis", job)

    def get_cost(self, job: Job) -> dict[str, Any] | None:
        # The costs app reports it (runs knows nothing of prices): see panels.register_report.
        return panels.report("cost", job)


class JobListSerializer(JobSerializer):
    """A row of the job list: a job's state, progress and cost, without its request and
    CustomJob (read those from the job's own record)."""

    # The schema of the rows controlplane/runs/list_rows.py writes, and the fields it writes:
    # this class is not what writes them.

    class Meta(JobSerializer.Meta):
        fields = ["id", "url", "team", "name", "kind", "tags", "state", "diagnosis",
                  "quota_wait",
                  "attempt",
                  "restarts", "created_by", "created_at", "started_at", "ended_at", "last_step",
                  "total_steps", "last_loss", "cost_micros", "lost_micros", "estimate_micros"]
        read_only_fields = fields


class JobNotesSerializer(StrictSerializer):
    """PATCH /api/v1/jobs/<id>/: the team's own words on a job (controlplane/runs/tags.py);
    a field left out is left as it is."""

    tags = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False), required=False,
        help_text="key: value labels, replacing the job's (at most 16; keys and values of "
                  "lowercase letters, digits, '_' and '-', a key starting with a letter); {} "
                  "removes them all.")
    add_tags = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False), required=False,
        help_text="key: value labels to add or change, the job's others kept (not with tags); "
                  "made at once with the job's row locked, so edits at the same time all stay.")
    remove_tags = serializers.ListField(
        child=serializers.CharField(), required=False,
        help_text="Keys of tags to remove, the others kept (not with tags); a key the job does "
                  "not carry is refused and nothing changes.")
    note = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False,
                                 help_text="Free text, at most 2,000 characters; '' clears it.")


class EventSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobEvent
        fields = ["kind", "attempt", "timestamp", "replica", "step", "data"]
        read_only_fields = fields


class GroupJobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=JobState.choices)
    last_loss = serializers.FloatField(allow_null=True)


class JobGroupSerializer(serializers.Serializer):
    """One group of the job list (controlplane/runs/groups.py); money in integer micro-dollars."""

    value = serializers.CharField(
        allow_null=True, help_text="The group's value of the key, as text; null for the jobs "
                                   "without the key.")
    jobs = serializers.IntegerField(help_text="How many jobs the group holds.")
    states = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="Its jobs by state (states with none left out).")
    best_loss = serializers.FloatField(allow_null=True,
                                       help_text="The lowest last loss of its jobs.")
    mean_loss = serializers.FloatField(allow_null=True,
                                       help_text="The mean last loss of its jobs that have one.")
    cost_micros = serializers.IntegerField(help_text="Billed so far, all its jobs.")
    lost_micros = serializers.IntegerField(help_text="Of which lost to preemptions.")
    running_seconds = serializers.IntegerField(
        help_text="Its jobs' running time added up: started to ended (or now).")
    accelerator_hours = serializers.FloatField(
        help_text="Its jobs' accelerator-hours (GPU-hours; TPU chips count as GPUs do): each "
                  "job's accelerators per replica x replicas, every worker pool, x its running "
                  "time; 0 for CPU jobs.")
    newest = GroupJobSerializer(many=True, help_text="Its newest jobs (at most 8).")
    jobs_url = serializers.URLField(
        allow_null=True, help_text="The job list of the group (the request's filters and the "
                                   "group's); null where the list's filters cannot name it: "
                                   "the jobs without the key, or a filter of the same name "
                                   "already asked for.")
    compare_url = serializers.URLField(help_text="The Compare page of its newest jobs.")


class JobGroupsSerializer(serializers.Serializer):
    group_by = serializers.CharField(help_text="What the jobs are grouped by: tag:KEY, "
                                               "config:KEY or sweep.")
    groups = JobGroupSerializer(many=True, help_text="The largest groups first.")
    more = serializers.BooleanField(help_text="There were more groups than `limit`: the "
                                              "smallest are left out.")
    limit = serializers.IntegerField(help_text="The most groups answered.")
