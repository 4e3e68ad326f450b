"""Serving API serializers; fields listed explicitly, unknown input keys refused."""

from __future__ import annotations

from rest_framework import serializers

from contract import prediction
from controlplane.core.serializers import StrictSerializer
from controlplane.serving import endpoint_access
from controlplane.serving.models import (
    Deployment,
    Endpoint,
    LatencySample,
    ModelEntry,
    Slo,
    SloAlert,
)
from controlplane.serving.prober import MIN_INTERVAL_S


# States as plain strings in the schema: several models here have a `state` with its own
# choices, and drf-spectacular would otherwise name colliding enums.
def _state() -> serializers.CharField:
    return serializers.CharField(read_only=True)


class ModelEntrySerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    state = _state()
    format = serializers.CharField(read_only=True, help_text="product or hf.")

    class Meta:
        model = ModelEntry
        fields = ["id", "team", "job", "display_name", "step", "artifact_uri", "image_uri",
                  "command", "args", "runtime", "format", "architecture", "parameter_count",
                  "vllm", "state", "vertex_name", "error_message", "created_at", "uploaded_at",
                  "engine_accelerator"]
        read_only_fields = fields


class RegisterModelSerializer(StrictSerializer):
    job = serializers.IntegerField(required=False, allow_null=True, default=None,
                                   help_text="The training job's id; with format hf and no "
                                   "artifact_uri, its final export is registered.")
    team = serializers.SlugField(required=False, help_text="Team slug, for an artifact_uri "
                                 "registered without a job; optional when you belong to one "
                                 "team.")
    # A string, not a choice: "format" names another enum in the schema (a job check's), and
    # the registry refuses an unknown format naming the field.
    format = serializers.CharField(
        default=ModelEntry.Format.PRODUCT, max_length=8,
        help_text="product: the product's trainers' model.pt (a checkpoint or final export); "
        "hf: a Hugging Face model folder (config.json with a supported architecture, "
        "safetensors weights, a tokenizer), checked before it is registered.")
    artifact_uri = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=500,
        help_text="format hf: the gs:// folder of the model (a job's --export-hf output or any "
        "folder under the team's output prefix); empty: the job's final export.")
    step = serializers.IntegerField(required=False, allow_null=True, min_value=0, default=None,
                                    help_text="A checkpoint step; null: the final export.")
    machine_type = serializers.CharField(
        required=False, max_length=64, help_text="runtime vllm: the machine the model is "
        "registered for; its GPU count is vLLM's tensor parallel size.")
    accelerator_type = serializers.CharField(
        required=False, allow_blank=True, max_length=64,
        help_text="runtime vllm on an n1 machine: its GPU type.")
    accelerator_count = serializers.IntegerField(required=False, min_value=0, max_value=16)
    max_model_len = serializers.IntegerField(
        required=False, min_value=1, help_text="runtime vllm: the longest sequence served; "
        "default 4096 or the model's max_position_embeddings when less.")
    dtype = serializers.CharField(required=False, max_length=16,
                                  help_text="runtime vllm: auto, bfloat16, float16 or float32.")
    gpu_memory_utilization = serializers.FloatField(
        required=False, help_text="runtime vllm: the share of each GPU vLLM takes, default 0.9.")
    display_name = serializers.CharField(required=False, allow_blank=True, max_length=128)
    image_uri = serializers.CharField(
        required=False, allow_blank=True, max_length=512,
        help_text="The serving image (one from images/); empty: the product's own server. An "
        "Artifact Registry image must exist, tag included.")
    runtime = serializers.ChoiceField(choices=ModelEntry.Runtime.choices, default="eager",
                                      help_text="How the serving container runs the model: "
                                      "eager; compiled with torch.compile before it serves; or "
                                      "aot, an AOTInductor package built by a packaging "
                                      "job before upload and loaded by every replica; or "
                                      "triton, NVIDIA Triton's image (image_uri: the team's "
                                      "Artifact Registry copy) "
                                      "serving the model's ONNX repository (KServe v2 "
                                      "inference at rawPredict); or tensorrt, the same image "
                                      "serving a TensorRT engine built on an NVIDIA_L4 GPU, "
                                      "deployable only with accelerator_type NVIDIA_L4; or vllm "
                                      "(format hf only), Model Garden's vLLM container on the "
                                      "GPUs of machine_type.")

    VLLM_FIELDS = ("machine_type", "accelerator_type", "accelerator_count", "max_model_len",
                   "dtype", "gpu_memory_utilization")


class PickerImageSerializer(serializers.Serializer):
    uri = serializers.CharField(help_text="LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE")
    tags = serializers.ListField(child=serializers.CharField(), help_text="Newest first.")
    source = serializers.ChoiceField(choices=["team", "google"], help_text="team: one of "
                                     "the team's repositories; google: a prebuilt container.")


class ServingImagesSerializer(serializers.Serializer):
    team = serializers.CharField()
    images = PickerImageSerializer(many=True)
    unreadable = serializers.ListField(child=serializers.CharField(), help_text="Locations "
                                       "whose repositories could not be read, and why.")


class SloSerializer(serializers.ModelSerializer):
    class Meta:
        model = Slo
        fields = ["p95_ms", "error_rate", "window_s", "min_samples", "enabled", "status",
                  "status_changed_at", "last_evaluated_at", "last_p95_ms", "last_error_rate",
                  "last_samples"]
        read_only_fields = ["status", "status_changed_at", "last_evaluated_at", "last_p95_ms",
                            "last_error_rate", "last_samples"]
        extra_kwargs = {
            "p95_ms": {"min_value": 0.1},
            "error_rate": {"min_value": 0.0, "max_value": 1.0},
            "window_s": {"min_value": 10, "max_value": 86400},
            "min_samples": {"min_value": 1},
        }


class DeploymentSerializer(serializers.ModelSerializer):
    model = serializers.PrimaryKeyRelatedField(source="model_entry", read_only=True)
    model_name = serializers.CharField(source="model_entry.display_name", read_only=True)
    deployed_model_id = serializers.CharField(read_only=True)
    state = _state()

    class Meta:
        model = Deployment
        fields = ["id", "endpoint", "model", "model_name", "deployed_model_id", "machine_type",
                  "accelerator_type", "accelerator_count", "min_replicas", "max_replicas",
                  "autoscaling_metric", "autoscaling_target", "traffic_percent", "state",
                  "available_replicas", "error_message", "created_at", "deployed_at",
                  "undeployed_at"]
        read_only_fields = fields


class DeploySerializer(StrictSerializer):
    model = serializers.IntegerField(help_text="A READY model registry entry's id.")
    machine_type = serializers.CharField(max_length=64, default="n1-standard-4")
    accelerator_type = serializers.CharField(max_length=64, required=False, allow_blank=True,
                                             default="")
    accelerator_count = serializers.IntegerField(min_value=0, default=0)
    min_replicas = serializers.IntegerField(min_value=1, max_value=1000, default=1)
    max_replicas = serializers.IntegerField(min_value=1, max_value=1000, required=False)
    autoscaling_metric = serializers.ChoiceField(choices=Deployment.Metric.choices, default="")
    autoscaling_target = serializers.IntegerField(min_value=0, max_value=100, default=0)
    traffic_percent = serializers.IntegerField(min_value=1, max_value=100, default=100)


class AutoscalingSerializer(StrictSerializer):
    min_replicas = serializers.IntegerField(min_value=1, max_value=1000)
    max_replicas = serializers.IntegerField(min_value=1, max_value=1000)
    autoscaling_metric = serializers.ChoiceField(choices=Deployment.Metric.choices, default="")
    autoscaling_target = serializers.IntegerField(min_value=0, max_value=100, default=0)


class EndpointSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    state = _state()
    deployments = serializers.SerializerMethodField()
    slo = serializers.SerializerMethodField()

    class Meta:
        model = Endpoint
        fields = ["id", "team", "name", "state", "vertex_name", "error_message", "created_at",
                  "access", "psc_project_allowlist", "dedicated_dns", "service_attachment",
                  "probe_enabled", "probe_interval_s", "probe_payload", "deployments", "slo"]
        read_only_fields = fields

    def get_deployments(self, endpoint: Endpoint) -> list[dict]:
        live = endpoint.deployments.exclude(state=Deployment.State.UNDEPLOYED)
        return DeploymentSerializer(live, many=True).data

    def get_slo(self, endpoint: Endpoint) -> dict | None:
        slo = Slo.objects.filter(endpoint=endpoint).first()
        return SloSerializer(slo).data if slo else None


class ProbeSettingsSerializer(StrictSerializer):
    probe_enabled = serializers.BooleanField(required=False)
    probe_interval_s = serializers.FloatField(required=False, min_value=MIN_INTERVAL_S,
                                              max_value=3600)
    probe_payload = serializers.JSONField(required=False,
                                          help_text='{"instances": [...], "parameters": {...}}')

    def validate_probe_payload(self, value: object) -> object:
        if value in ({}, None):
            return {}
        if not isinstance(value, dict) or not isinstance(value.get("instances"), list) \
                or not value["instances"]:
            raise serializers.ValidationError('must be {"instances": [...]} with at least one')
        unknown = set(value) - prediction.REQUEST_KEYS
        if unknown:
            raise serializers.ValidationError(f"unknown keys {sorted(unknown)}")
        return value


class CreateEndpointSerializer(ProbeSettingsSerializer):
    team = serializers.SlugField(required=False,
                                 help_text="Team slug; optional when you belong to one team.")
    name = serializers.CharField(max_length=100)
    access = serializers.ChoiceField(
        choices=Endpoint.Access.choices, default=Endpoint.Access.PUBLIC,
        help_text="public: the shared prediction domain; dedicated: a DNS name of its own; "
        "private: Private Service Connect from the allowlisted projects only.")
    psc_project_allowlist = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=100,
        help_text="Private endpoints: the project ids or numbers whose VPCs may connect.")

    def validate(self, attrs: dict) -> dict:
        try:
            attrs["psc_project_allowlist"] = endpoint_access.check(
                attrs.get("access", Endpoint.Access.PUBLIC),
                attrs.get("psc_project_allowlist") or [])
        except endpoint_access.AccessError as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        return attrs


class SampleSerializer(serializers.ModelSerializer):
    class Meta:
        model = LatencySample
        fields = ["at", "latency_ms", "ok", "error", "deployed_model_id"]
        read_only_fields = fields


class AlertSerializer(serializers.ModelSerializer):
    # Derived from the notifications outbox's rows for the alert (SloAlert.delivery); null
    # when there was no channel to send it to.
    delivery = serializers.ChoiceField(choices=SloAlert.Delivery.choices, read_only=True,
                                       allow_null=True)
    delivered_at = serializers.DateTimeField(read_only=True, allow_null=True)
    delivery_error = serializers.CharField(read_only=True)

    class Meta:
        model = SloAlert
        fields = ["id", "kind", "at", "p95_ms", "error_rate", "samples", "message", "delivery",
                  "delivered_at", "delivery_error"]
        read_only_fields = fields


class PredictSerializer(StrictSerializer):
    instances = serializers.ListField(child=serializers.JSONField(), min_length=1,
                                      max_length=64)
    parameters = serializers.JSONField(required=False)
