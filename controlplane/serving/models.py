"""Serving records: registry entries, endpoints, deployments, latency and SLOs.

Vertex is the source of truth for what exists and runs; these rows say what was asked for and
what was last seen, and hold what only this product measures (probe latency, SLO state).
Resource ids on Vertex are derived from primary keys (`cp-model-<pk>`, `cp-ep-<pk>`, deployed
model id `<pk>`), so a retried call finds what an earlier try created.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from contract import labels as contract_labels
from controlplane.runs.models import Job
from controlplane.serving.state_moves import move as _move
from controlplane.teams.models import Team


class ModelEntry(models.Model):
    """A model registry entry: one checkpoint of a job (or its final export), or a Hugging Face
    model folder under the team's prefix, uploaded to Vertex's Model Registry."""

    class State(models.TextChoices):
        # A triton or tensorrt model's repository is built by a packaging CustomJob first.
        PACKAGING = "PACKAGING"
        UPLOADING = "UPLOADING"
        READY = "READY"
        FAILED = "FAILED"

    class Runtime(models.TextChoices):
        # The serving container's --runtime (trainers/serving/runtimes.py).
        EAGER = "eager", "eager (PyTorch as trained)"
        COMPILED = "compiled", "compiled (torch.compile before serving)"
        AOT = "aot", "aot (AOTInductor package, built once, kept beside the weights)"
        # Not the product's server: Triton's own image serving the model repository that
        # trainers/serving/triton_repo.py writes beside the weights (registry.triton_container).
        TRITON = "triton", "triton (NVIDIA Triton serving an ONNX model repository)"
        # Triton serving a TensorRT engine built from the same ONNX graph on a GPU by the
        # packaging job (trainers/serving/tensorrt_repo.py, serving/tensorrt_engine.py).
        TENSORRT = "tensorrt", "tensorrt (NVIDIA Triton serving a TensorRT engine, GPU only)"
        # Not the product's server: Model Garden's prebuilt vLLM container serving a Hugging
        # Face model on the GPUs it was registered for (vertexplan/serving_vllm.py).
        VLLM = "vllm", "vllm (Model Garden's vLLM container, Hugging Face models, GPU only)"

    class Format(models.TextChoices):
        # What the artifact folder holds: the product's model.pt + config.json, or a Hugging
        # Face model (config.json, safetensors, tokenizer: vertexplan/hf_export.py).
        PRODUCT = "product", "product (model.pt from the product's trainers)"
        HF = "hf", "hf (Hugging Face config.json + safetensors + tokenizer)"

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="model_entries")
    # The job that trained it; null for a Hugging Face folder registered on its own.
    job = models.ForeignKey(Job, on_delete=models.PROTECT, related_name="model_entries",
                            null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="+")
    display_name = models.CharField(max_length=128)
    # The training step of the weights; null for the job's final export (AIP_MODEL_DIR).
    step = models.PositiveIntegerField(null=True, blank=True)
    artifact_uri = models.CharField(max_length=500)  # gs:// folder with model.pt + config.json
    image_uri = models.CharField(max_length=512)
    command = models.JSONField(default=list)
    args = models.JSONField(default=list, blank=True)
    runtime = models.CharField(max_length=16, choices=Runtime.choices, default=Runtime.EAGER)
    format = models.CharField(max_length=8, choices=Format.choices, default=Format.PRODUCT)
    # A Hugging Face model's architecture and size, read from its config.json at registration
    # (hf_facts: what the vLLM fit check needs, vertexplan.hf_export.HfExport.as_dict).
    architecture = models.CharField(max_length=64, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True)
    hf_facts = models.JSONField(default=dict, blank=True)
    # A vllm model's GPU shape and vLLM settings: machine_type, accelerator_type,
    # accelerator_count (= tensor parallel size), max_model_len, dtype, gpu_memory_utilization.
    vllm = models.JSONField(default=dict, blank=True)

    state = models.CharField(max_length=10, choices=State.choices, default=State.UPLOADING)
    vertex_name = models.CharField(max_length=300, blank=True)
    operation_name = models.CharField(max_length=300, blank=True)
    packaging_job = models.CharField(max_length=300, blank=True)  # its CustomJob's name
    # A tensorrt engine's GPU: the packaging job's accelerator, the only one it deploys on.
    engine_accelerator = models.CharField(max_length=64, blank=True)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    uploaded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "jobs_modelentry"  # kept from the app it was first created in
        ordering = ["-created_at", "-id"]
        constraints = [
            # One entry per checkpoint and runtime: the same weights may be served eager,
            # compiled, aot, and (from their own repository folder) by triton or tensorrt.
            models.UniqueConstraint(fields=["job", "artifact_uri", "runtime"],
                                    name="one_entry_per_artifact_runtime"),
            # A folder registered without a job: once per team and runtime.
            models.UniqueConstraint(fields=["team", "artifact_uri", "runtime"],
                                    condition=models.Q(job__isnull=True),
                                    name="one_entry_per_folder_runtime"),
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def vertex_model_id(self) -> str:
        return contract_labels.vertex_model_id(self.pk)

    def transition(self, new_state: str, *, at: datetime | None = None, error: str = "",
                   vertex_name: str = "") -> bool:
        """The one place an entry's state changes; returns whether it changed (see _move).
        READY records the Model Registry's name for the model and when the upload ended."""
        changes: dict[str, Any] = {}
        if new_state == self.State.READY:
            changes.update(vertex_name=vertex_name or self.vertex_name,
                           uploaded_at=at or timezone.now())
        if error:
            changes["error_message"] = error
        return _move(self, _ENTRY_MOVES, new_state, changes)

    @property
    def source(self) -> str:
        if self.job_id is None:
            return "model folder"
        return f"step {self.step}" if self.step is not None else "final export"


_ENTRY_MOVES: dict[str, frozenset[str]] = {
    ModelEntry.State.PACKAGING: frozenset({ModelEntry.State.UPLOADING, ModelEntry.State.FAILED}),
    ModelEntry.State.UPLOADING: frozenset({ModelEntry.State.READY, ModelEntry.State.FAILED}),
    ModelEntry.State.READY: frozenset(),
    ModelEntry.State.FAILED: frozenset(),
}


class Endpoint(models.Model):
    class State(models.TextChoices):
        CREATING = "CREATING"
        READY = "READY"
        DELETING = "DELETING"
        DELETED = "DELETED"
        FAILED = "FAILED"

    class Access(models.TextChoices):
        # How clients reach it (fixed at creation, as on Vertex).
        PUBLIC = "public", "public (the shared prediction domain)"
        DEDICATED = "dedicated", "dedicated (its own DNS name, isolated from others' traffic)"
        PRIVATE = "private", "private (Private Service Connect, from allowlisted projects)"

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="endpoints")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="+")
    name = models.CharField(max_length=100)
    state = models.CharField(max_length=10, choices=State.choices, default=State.CREATING,
                             db_index=True)
    vertex_name = models.CharField(max_length=300, blank=True)
    operation_name = models.CharField(max_length=300, blank=True)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    access = models.CharField(max_length=10, choices=Access.choices, default=Access.PUBLIC)
    # Private endpoints: the projects whose VPCs may connect (Private Service Connect).
    psc_project_allowlist = models.JSONField(default=list, blank=True)
    # Given by Vertex once created: the dedicated endpoint's DNS name, the PSC service
    # attachment consumers connect their endpoint to.
    dedicated_dns = models.CharField(max_length=300, blank=True)
    service_attachment = models.CharField(max_length=300, blank=True)

    # The prober: one real prediction every probe_interval_s while something is deployed.
    probe_enabled = models.BooleanField(default=True)
    probe_interval_s = models.FloatField(default=10.0)
    probe_payload = models.JSONField(default=dict, blank=True)  # {"instances": [...], ...}
    next_probe_at = models.DateTimeField(null=True, blank=True, db_index=True)
    monitoring_read_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "jobs_endpoint"  # kept from the app it was first created in
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    @property
    def vertex_endpoint_id(self) -> str:
        return contract_labels.vertex_endpoint_id(self.pk)

    def transition(self, new_state: str, *, error: str = "", vertex_name: str = "",
                   dedicated_dns: str = "", service_attachment: str = "") -> bool:
        """The one place an endpoint's state changes; returns whether it changed (see _move).
        READY records the endpoint's name on Vertex (and where its clients connect, for a
        dedicated or private one); DELETING forgets the create operation, so the delete's can
        be recorded."""
        changes: dict[str, Any] = {}
        if new_state == self.State.READY:
            changes["vertex_name"] = vertex_name or self.vertex_name
            changes["dedicated_dns"] = dedicated_dns or self.dedicated_dns
            changes["service_attachment"] = service_attachment or self.service_attachment
        if new_state == self.State.DELETING:
            changes["operation_name"] = ""
        if error:
            changes["error_message"] = error
        return _move(self, _ENDPOINT_MOVES, new_state, changes)


_E = Endpoint.State
_ENDPOINT_MOVES: dict[str, frozenset[str]] = {
    # DELETED straight from CREATING: the create never reached Vertex.
    _E.CREATING: frozenset({_E.READY, _E.FAILED, _E.DELETING, _E.DELETED}),
    _E.READY: frozenset({_E.DELETING}),
    _E.FAILED: frozenset({_E.DELETING}),
    _E.DELETING: frozenset({_E.DELETED}),
    _E.DELETED: frozenset(),
}


class Deployment(models.Model):
    """One DeployedModel: a registry entry on an endpoint with its machines and autoscaling."""

    class State(models.TextChoices):
        DEPLOYING = "DEPLOYING"
        DEPLOYED = "DEPLOYED"
        UNDEPLOYING = "UNDEPLOYING"
        UNDEPLOYED = "UNDEPLOYED"
        FAILED = "FAILED"

    class Metric(models.TextChoices):
        DEFAULT = "", "Vertex default (CPU 60%)"
        CPU = "cpu", "CPU utilization"
        ACCELERATOR = "accelerator", "Accelerator duty cycle"

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deployments")
    model_entry = models.ForeignKey(ModelEntry, on_delete=models.PROTECT,
                                    related_name="deployments")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="+")
    machine_type = models.CharField(max_length=64)
    accelerator_type = models.CharField(max_length=64, blank=True)
    accelerator_count = models.PositiveSmallIntegerField(default=0)
    min_replicas = models.PositiveSmallIntegerField(default=1)
    max_replicas = models.PositiveSmallIntegerField(default=1)
    autoscaling_metric = models.CharField(max_length=12, choices=Metric.choices, blank=True)
    autoscaling_target = models.PositiveSmallIntegerField(default=0)  # percent; 0 = default
    # The share asked for at deploy time; once deployed, the share the endpoint gives it (the
    # serving sweep reads the endpoint's split: later deploys and undeploys change it).
    traffic_percent = models.PositiveSmallIntegerField(default=100)

    state = models.CharField(max_length=12, choices=State.choices, default=State.DEPLOYING,
                             db_index=True)
    operation_name = models.CharField(max_length=300, blank=True)
    # A MutateDeployedModel in flight (autoscaling changed after deployment).
    scaling_operation_name = models.CharField(max_length=300, blank=True)
    available_replicas = models.PositiveSmallIntegerField(default=0)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    deployed_at = models.DateTimeField(null=True, blank=True)
    undeployed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "jobs_deployment"  # kept from the app it was first created in
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.model_entry} on {self.endpoint}"

    @property
    def deployed_model_id(self) -> str:
        return str(self.pk)

    def transition(self, new_state: str, *, at: datetime | None = None, error: str = "",
                   available_replicas: int | None = None) -> bool:
        """The one place a deployment's state changes; returns whether it changed (see _move).
        DEPLOYED records when (the first time) and the replicas available; UNDEPLOYING forgets
        the deploy operation, so the undeploy's can be recorded; UNDEPLOYED records when, and
        that no replica is left."""
        at = at or timezone.now()
        changes: dict[str, Any] = {}
        if new_state == self.State.DEPLOYED:
            changes["deployed_at"] = self.deployed_at or at
            if available_replicas is not None:
                changes["available_replicas"] = available_replicas
        elif new_state == self.State.UNDEPLOYING:
            changes["operation_name"] = ""
        elif new_state == self.State.UNDEPLOYED:
            changes.update(undeployed_at=at, available_replicas=0)
        if error:
            changes["error_message"] = error
        return _move(self, _DEPLOYMENT_MOVES, new_state, changes)


_D = Deployment.State
_DEPLOYMENT_MOVES: dict[str, frozenset[str]] = {
    _D.DEPLOYING: frozenset({_D.DEPLOYED, _D.FAILED}),
    # UNDEPLOYED straight from DEPLOYED: undeployed outside this product.
    _D.DEPLOYED: frozenset({_D.UNDEPLOYING, _D.UNDEPLOYED}),
    _D.UNDEPLOYING: frozenset({_D.UNDEPLOYED}),
    _D.UNDEPLOYED: frozenset(),
    _D.FAILED: frozenset(),
}


class LatencySample(models.Model):
    """One probe: a real prediction request the prober sent, and how it went."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE,
                                 related_name="latency_samples")
    at = models.DateTimeField(default=timezone.now)
    latency_ms = models.FloatField()
    ok = models.BooleanField()
    error = models.CharField(max_length=300, blank=True)
    deployed_model_id = models.CharField(max_length=20, blank=True)

    class Meta:
        db_table = "jobs_latencysample"  # kept from the app it was first created in
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["endpoint", "at"])]


class MonitoringWindow(models.Model):
    """Cloud Monitoring's figures for one 60 s window of an endpoint (Vertex only)."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE,
                                 related_name="monitoring_windows")
    end = models.DateTimeField()
    p50_ms = models.FloatField(null=True)
    p95_ms = models.FloatField(null=True)
    p99_ms = models.FloatField(null=True)
    requests = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "jobs_monitoringwindow"  # kept from the app it was first created in
        ordering = ["end"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "end"], name="one_window_per_minute"),
        ]


class Slo(models.Model):
    """An endpoint's objective: p95 latency and error rate over a sliding window of probes."""

    class Status(models.TextChoices):
        OK = "OK"
        BREACHED = "BREACHED"

    endpoint = models.OneToOneField(Endpoint, on_delete=models.CASCADE, related_name="slo")
    p95_ms = models.FloatField()
    error_rate = models.FloatField(default=0.01)  # a fraction: 0.01 = 1% of probes may fail
    window_s = models.PositiveIntegerField(default=300)
    min_samples = models.PositiveIntegerField(default=10)
    enabled = models.BooleanField(default=True)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OK)
    status_changed_at = models.DateTimeField(default=timezone.now)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    last_p95_ms = models.FloatField(null=True, blank=True)
    last_error_rate = models.FloatField(null=True, blank=True)
    last_samples = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "jobs_slo"  # kept from the app it was first created in

    def __str__(self) -> str:
        return f"SLO of {self.endpoint}: p95 <= {self.p95_ms:g} ms, errors <= {self.error_rate:.2%}"

    def transition(self, new_status: str, *, at: datetime | None = None) -> bool:
        """The one place an SLO's status changes; returns whether it changed. Of two workers
        that evaluated the same probes, one wins (see _move) and records the alert."""
        return _move(self, _SLO_MOVES, new_status, {"status_changed_at": at or timezone.now()},
                     field="status")


_SLO_MOVES: dict[str, frozenset[str]] = {
    Slo.Status.OK: frozenset({Slo.Status.BREACHED}),
    Slo.Status.BREACHED: frozenset({Slo.Status.OK}),
}


class SloAlert(models.Model):
    """A breach or a recovery, recorded once. Sending it to the team's channels is the
    notifications app's: one row of its outbox per channel (Notification.slo_alert, reverse
    relation `notifications`), with the same claim, retry and permanent-error rules as every
    other message. What the API and the endpoint page show of the delivery is derived from
    those rows (prefetch `notifications__channel` when listing alerts)."""

    class Kind(models.TextChoices):
        BREACH = "BREACH"
        RECOVERY = "RECOVERY"

    class Delivery(models.TextChoices):
        """The delivery as a whole, from its rows' statuses, the first that any row has."""
        PENDING = "PENDING"    # waiting to be sent, or to be retried after a passing error
        SENDING = "SENDING"
        FAILED = "FAILED"      # a channel refused it for good, or the tries ran out
        UNKNOWN = "UNKNOWN"    # a worker stopped while sending: not resent
        SENT = "SENT"          # every channel has it

    slo = models.ForeignKey(Slo, on_delete=models.CASCADE, related_name="alerts")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    at = models.DateTimeField(default=timezone.now)
    p95_ms = models.FloatField(null=True)
    error_rate = models.FloatField(null=True)
    samples = models.PositiveIntegerField(default=0)
    message = models.TextField()

    class Meta:
        db_table = "jobs_sloalert"  # kept from the app it was first created in
        ordering = ["-at", "-id"]

    def _deliveries(self) -> list[Any]:
        return list(self.notifications.all())

    @property
    def delivery(self) -> str | None:
        """None when there was no channel to send it to (or it was sent before alerts went
        through the notifications outbox)."""
        statuses = {row.status.upper() for row in self._deliveries()}
        return next((s for s in self.Delivery.values if s in statuses), None)

    @property
    def delivered_at(self) -> datetime | None:
        """When it last reached a channel."""
        return max((row.sent_at for row in self._deliveries() if row.sent_at), default=None)

    @property
    def delivery_error(self) -> str:
        """The last error of each channel that does not have it (yet), one per line."""
        return "\n".join(f"{row.channel.name}: {row.last_error}" for row in self._deliveries()
                          if row.last_error and row.sent_at is None)


# A model's runtime trials, kept in their own module (imported here so Django finds the model).
from controlplane.serving.trial_models import RuntimeTrial  # noqa: E402, F401
