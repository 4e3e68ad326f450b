"""Cluster API serializers; fields listed explicitly, unknown input keys refused. The cluster
request itself is checked by vertexplan.clusters, whose errors name each field
(`pools[1].accelerator_type`, `ray.version`)."""

from __future__ import annotations

from datetime import datetime

from rest_framework import serializers

from controlplane.clusters import idle
from controlplane.clusters.models import Cluster, RayJob
from controlplane.core.serializers import StrictSerializer
from vertexplan.clusters.cost import BILLING_NOTE


class ClusterSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    state = serializers.CharField(read_only=True)
    accrued_micros = serializers.SerializerMethodField()
    billing = serializers.SerializerMethodField()
    idle_since = serializers.SerializerMethodField()
    idle_flagged = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = ["id", "team", "name", "region", "request", "resource", "ray_version", "state",
                  "vertex_name", "dashboard_uri", "error_message", "hourly_micros",
                  "min_hourly_micros", "max_hourly_micros", "price_source", "accrued_micros",
                  "billing", "idle_since", "idle_flagged", "created_at", "running_since",
                  "deleted_at"]
        read_only_fields = fields

    def get_accrued_micros(self, cluster: Cluster) -> int:
        return cluster.accrued_micros()

    def get_billing(self, cluster: Cluster) -> str:
        return BILLING_NOTE

    def get_idle_since(self, cluster: Cluster) -> datetime | None:
        return idle.idle_since(cluster)

    def get_idle_flagged(self, cluster: Cluster) -> bool:
        return idle.flagged(cluster)


class CreateClusterSerializer(StrictSerializer):
    team = serializers.CharField(required=False, max_length=100)
    name = serializers.CharField(max_length=63, help_text="Lowercase letters, digits, hyphens.")
    display_name = serializers.CharField(required=False, allow_blank=True, max_length=128)
    pools = serializers.ListField(
        child=serializers.DictField(), max_length=16,
        help_text="Resource pools: id, machine_type, replica_count, accelerator_type, "
                  "accelerator_count, min_replica_count, max_replica_count, boot_disk_type, "
                  "boot_disk_size_gb. The first runs the Ray head.")
    ray = serializers.DictField(required=False, allow_null=True,
                                help_text="version, python, image_uri, head_pool_id; null for "
                                          "a cluster without Ray.")
    network = serializers.CharField(required=False, allow_blank=True, max_length=200)
    service_account = serializers.CharField(required=False, allow_blank=True, max_length=200)
    labels = serializers.DictField(child=serializers.CharField(max_length=63), required=False)


class ReplicasSerializer(StrictSerializer):
    replicas = serializers.DictField(child=serializers.IntegerField(min_value=0,
                                                                    max_value=1000),
                                     help_text="New replica counts by pool id.")


class RayJobSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    state = serializers.CharField(read_only=True)
    job = serializers.IntegerField(
        source="job_id", read_only=True, allow_null=True,
        help_text="The Ray job's own job (kind ray): its steps, events, checkpoints and "
                  "searchable logs under /api/v1/jobs/<job>/, and its page /jobs/<job>/.")

    class Meta:
        model = RayJob
        fields = ["id", "team", "cluster", "job", "entrypoint", "env_vars",
                  "entrypoint_num_cpus", "state", "message", "submission_id", "summary",
                  "stop_requested", "created_at", "started_at", "ended_at"]
        read_only_fields = fields


class SubmitRayJobSerializer(StrictSerializer):
    cluster = serializers.IntegerField(help_text="The cluster's id.")
    entrypoint = serializers.ListField(child=serializers.CharField(max_length=1000,
                                                                   trim_whitespace=False),
                                       min_length=1, max_length=64,
                                       help_text="The command as arguments; no shell.")
    env_vars = serializers.DictField(child=serializers.CharField(max_length=4096,
                                                                allow_blank=True),
                                     required=False)
    entrypoint_num_cpus = serializers.FloatField(required=False, allow_null=True,
                                                 min_value=0, max_value=64)
