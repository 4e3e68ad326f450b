"""API serializers of the composer: the job request (the form's fields as JSON) and team
templates. Fields are listed explicitly; unknown keys are refused, with the field they are
probably a typo of."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from controlplane.compose.models import JobTemplate
from controlplane.core.serializers import CheckpointingField, StrictSerializer
from controlplane.runs import recovery, recovery_policy
from vertexplan.composer import STRATEGIES, parallelism
from vertexplan.composer.request import SCHEDULING_STRATEGIES


def _verbatim(**kwargs: Any) -> serializers.CharField:
    """A string the container receives as written: a `bash -c` script keeps its final newline
    and an argument its spaces (DRF trims CharField input by default)."""
    return serializers.CharField(trim_whitespace=False, **kwargs)


class NfsMountSerializer(StrictSerializer):
    server = serializers.CharField(help_text="The NFS server's IP or host name in the VPC.")
    path = serializers.CharField(help_text="The exported directory, e.g. /share.")
    mount_point = serializers.CharField(help_text="Mounted at /mnt/nfs/<mount_point>.")


class ReservationSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=["NO_RESERVATION", "ANY_RESERVATION",
                                            "SPECIFIC_RESERVATION"])
    key = serializers.CharField(required=False)
    values = serializers.ListField(child=serializers.CharField(), required=False)


class PoolSerializer(StrictSerializer):
    machine_type = serializers.CharField(required=False, allow_blank=True, max_length=64)
    accelerator_type = serializers.CharField(required=False, allow_blank=True, max_length=64)
    accelerator_count = serializers.IntegerField(required=False, min_value=0)
    tpu_topology = serializers.CharField(required=False, allow_blank=True, max_length=16)
    gpu_partition_size = serializers.CharField(required=False, allow_blank=True, max_length=16,
                                               help_text="MIG partition, e.g. 1g.10gb (A100 "
                                               "80GB, H100).")
    boot_disk_type = serializers.CharField(required=False, allow_blank=True, max_length=32)
    boot_disk_size_gb = serializers.IntegerField(required=False)
    replica_count = serializers.IntegerField(required=False)
    reservation = ReservationSerializer(required=False)
    # A pool other than the chief may run its own image, command, arguments or environment.
    image_uri = serializers.CharField(required=False, allow_blank=True, max_length=512)
    command = serializers.ListField(child=_verbatim(), required=False)
    args = serializers.ListField(child=_verbatim(allow_blank=True), required=False)
    env = serializers.DictField(child=_verbatim(allow_blank=True), required=False)
    nfs_mounts = NfsMountSerializer(many=True, required=False)


class PythonPackageSerializer(StrictSerializer):
    executor_image_uri = serializers.CharField(max_length=512, help_text="One of Vertex's "
                                               "prebuilt training images.")
    package_uris = serializers.ListField(child=serializers.CharField(max_length=1024),
                                         max_length=100, help_text="gs:// URIs of the "
                                         "training package (sdist or wheel) and its "
                                         "dependencies.")
    python_module = serializers.CharField(max_length=256, help_text="e.g. trainer.task")


class BatchSerializer(StrictSerializer):
    global_batch_size = serializers.IntegerField(required=False, min_value=1)
    micro_batch_size = serializers.IntegerField(required=False, min_value=1)
    gradient_accumulation_steps = serializers.IntegerField(required=False, min_value=1)


class FsdpSerializer(StrictSerializer):
    mode = serializers.ChoiceField(choices=list(parallelism.FSDP_MODES), required=False)
    shard_size = serializers.IntegerField(required=False, min_value=0)


class DeepSpeedSerializer(StrictSerializer):
    offload_optimizer = serializers.BooleanField(required=False)
    offload_params = serializers.BooleanField(required=False)
    gradient_clipping = serializers.FloatField(required=False, min_value=0)
    optimizer = serializers.DictField(required=False, help_text='{"type": "AdamW", "lr": 3e-4, '
                                      '"betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01}')
    scheduler = serializers.DictField(required=False, help_text='{"type": "WarmupDecayLR", '
                                      '"warmup_num_steps": 1000, "total_num_steps": 100000}')
    fp16 = serializers.DictField(required=False, help_text="fp16 loss scaling: "
                                 "initial_scale_power, loss_scale_window, hysteresis, "
                                 "min_loss_scale")
    zero = serializers.DictField(required=False, help_text="allgather_bucket_size, "
                                 "reduce_bucket_size, overlap_comm, reduce_scatter, "
                                 "contiguous_gradients, allgather_partitions")
    extra = serializers.DictField(required=False, help_text="Any other top-level DeepSpeed key.")


class ParallelismSerializer(StrictSerializer):
    tensor = serializers.IntegerField(required=False, min_value=1)
    pipeline = serializers.IntegerField(required=False, min_value=1)
    data = serializers.IntegerField(required=False, min_value=0,
                                    help_text="0 or absent: world size / (tensor x pipeline).")
    pipeline_schedule = serializers.ChoiceField(
        choices=list(parallelism.PIPELINE_SCHEDULES), required=False,
        help_text="With pipeline > 1 (default 1f1b); interleaved_1f1b needs virtual_stages.")
    virtual_stages = serializers.IntegerField(required=False, min_value=1,
                                              help_text="Pipeline stages per pipeline rank.")
    sequence_parallel = serializers.BooleanField(required=False,
                                                 help_text="With tensor > 1.")


class TpuSerializer(StrictSerializer):
    sharding = serializers.ChoiceField(choices=list(parallelism.TPU_SHARDINGS), required=False)


class ModelSerializer(StrictSerializer):
    parameters = serializers.IntegerField(min_value=1)
    trainable_parameters = serializers.IntegerField(required=False, min_value=1)
    largest_layer_parameters = serializers.IntegerField(required=False, min_value=1)
    hidden_size = serializers.IntegerField(required=False, min_value=1)
    layers = serializers.IntegerField(required=False, min_value=1)
    sequence_length = serializers.IntegerField(required=False, min_value=1)
    attention_heads = serializers.IntegerField(required=False, min_value=1)
    vocab_size = serializers.IntegerField(required=False, min_value=1)
    intermediate_size = serializers.IntegerField(
        required=False, min_value=1,
        help_text="A gated MLP's width (SwiGLU/GeGLU: Llama, Qwen, Gemma); without it, a 4h MLP.")
    kv_heads = serializers.IntegerField(
        required=False, min_value=1,
        help_text="Key/value heads of grouped-query attention (default: attention_heads).")
    activation_checkpointing = CheckpointingField(required=False)


def _whole(key: str, **kwargs: Any) -> serializers.IntegerField:
    low, high, _ = recovery_policy.WHOLE_RANGES[key]
    text = recovery_policy.whole_range_text(key)
    return serializers.IntegerField(required=False, min_value=low, max_value=high,
                                    error_messages={"invalid": text, "min_value": text,
                                                    "max_value": text}, **kwargs)


class _SecondsField(serializers.FloatField):
    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool):  # float(True) is 1.0: a type error, not one second
            self.fail("invalid")
        return super().to_internal_value(data)


def _seconds(key: str, **kwargs: Any) -> serializers.FloatField:
    low, high = recovery_policy.SECONDS_RANGES[key]
    text = recovery_policy.seconds_range_text(key)
    return _SecondsField(required=False, min_value=low, max_value=high,
                         error_messages={"invalid": text, "min_value": text,
                                         "max_value": text}, **kwargs)


class RecoverySerializer(StrictSerializer):
    """What happens after a preemption or stockout Vertex's own retries did not absorb."""

    strategy = serializers.ChoiceField(choices=sorted(recovery.STRATEGIES), required=False,
                                       help_text="failover: retry in place after a "
                                       "preemption, move along the fallbacks, then the "
                                       "regions; eager_next_region: the next region first.")
    max_recoveries = _whole("max_recoveries", help_text="All recoveries together (3).")
    retries_in_place = _whole(
        "retries_in_place",
        help_text="After a preemption, attempts where the job was before moving on (2).")
    tries_per_step = _whole(
        "tries_per_step", help_text="After a stockout, tries on one scheduling strategy in "
        "one region (the first included) before the next step (1); the last step keeps "
        "trying until max_recoveries.")
    tries_per_region = _whole(
        "tries_per_region", help_text="Tries in one region, all its steps together, before "
        "the next region (0: no limit but the steps').")
    backoff_s = _seconds("backoff_s", help_text="The first wait before a try, in seconds "
                         "(the site's, 10); doubles, jittered, with each try at one step.")
    backoff_cap_s = _seconds("backoff_cap_s", help_text="The longest wait, in seconds (the "
                             "site's, 300); at least backoff_s.")
    # Checked against SPOT, FLEX_START, STANDARD by the recovery policy's own parser.
    fallback = serializers.ListField(
        child=serializers.CharField(max_length=20), required=False, max_length=3,
        help_text='Scheduling strategies to move to, in order: SPOT, FLEX_START, STANDARD, '
                  'e.g. ["FLEX_START", "STANDARD"].')
    regions = serializers.ListField(child=serializers.CharField(max_length=40), required=False,
                                    max_length=10, help_text="Other regions to fail over to, "
                                    "in order; checkpoints must be in a multi-region or "
                                    "dual-region bucket.")


class JobRequestSerializer(StrictSerializer):
    """The compose form's fields as JSON. The job endpoints also take a Vertex CustomJob in its
    REST JSON ({"displayName": ..., "jobSpec": {...}}); see the API's description."""

    team = serializers.SlugField(required=False,
                                 help_text="Team slug; optional when you belong to one team.")
    name = serializers.CharField(max_length=100)
    region = serializers.CharField(required=False, max_length=40,
                                   help_text=f"Default: {settings.VERTEX_REGION}")
    strategy = serializers.ChoiceField(choices=list(STRATEGIES), default="ddp")
    precision = serializers.ChoiceField(choices=list(parallelism.PRECISIONS), required=False,
                                        allow_null=True)
    scheduling_strategy = serializers.ChoiceField(choices=list(SCHEDULING_STRATEGIES),
                                                  required=False)
    spot = serializers.BooleanField(required=False,
                                    help_text="Older spelling of scheduling_strategy SPOT.")
    image_uri = serializers.CharField(required=False, allow_blank=True, max_length=512)
    python_package = PythonPackageSerializer(
        required=False, help_text="Run a Python package's module in a prebuilt image "
        "(pythonPackageSpec) instead of a container; args and env go to the module.")
    image_entrypoint = serializers.BooleanField(required=False,
                                                help_text="Run the image's ENTRYPOINT.")
    command = serializers.ListField(child=_verbatim(), required=False,
                                    help_text="Empty: the built-in trainer launcher.")
    args = serializers.ListField(child=_verbatim(allow_blank=True), required=False)
    env = serializers.DictField(child=_verbatim(allow_blank=True), required=False)
    chief = PoolSerializer()
    workers = PoolSerializer(required=False, allow_null=True,
                             help_text="Absent or null: no workers pool.")
    reduction_server = PoolSerializer(required=False, allow_null=True,
                                      help_text="workerPoolSpecs[2]: Vertex's Reduction Server.")
    parameter_servers = PoolSerializer(required=False, allow_null=True,
                                       help_text="workerPoolSpecs[2]: parameter servers.")
    evaluators = PoolSerializer(required=False, allow_null=True,
                                help_text="workerPoolSpecs[3].")
    restart_job_on_worker_restart = serializers.BooleanField(required=False, allow_null=True,
                                                             default=None)
    disable_retries = serializers.BooleanField(required=False)
    timeout_hours = serializers.FloatField(required=False, min_value=0.01, max_value=24 * 7)
    max_wait_hours = serializers.FloatField(required=False, min_value=0, max_value=24 * 7,
                                            help_text="FLEX_START: 0 waits without limit.")
    base_output_directory = serializers.CharField(required=False, allow_blank=True)
    nfs_mounts = NfsMountSerializer(many=True, required=False)
    network = serializers.CharField(required=False, allow_blank=True)
    reserved_ip_ranges = serializers.ListField(child=serializers.CharField(), required=False)
    psc_network_attachment = serializers.CharField(required=False, allow_blank=True)
    enable_web_access = serializers.BooleanField(required=False)
    enable_dashboard_access = serializers.BooleanField(required=False)
    service_account = serializers.CharField(required=False, allow_blank=True)
    labels = serializers.DictField(child=serializers.CharField(allow_blank=True),
                                   required=False)
    batch = BatchSerializer(required=False)
    fsdp = FsdpSerializer(required=False)
    deepspeed = DeepSpeedSerializer(required=False)
    parallelism = ParallelismSerializer(required=False)
    tpu = TpuSerializer(required=False)
    model = ModelSerializer(required=False, help_text="The model's size: gives a memory plan.")
    tensorboard = serializers.CharField(
        required=False, allow_blank=True,
        help_text="A Vertex TensorBoard the job writes to: projects/<p>/locations/<l>/"
                  "tensorboards/<id>")
    experiment = serializers.CharField(
        required=False, allow_blank=True,
        help_text="A Vertex Experiment: projects/<p>/locations/<l>/metadataStores/<store>/"
                  "contexts/<experiment>")
    experiment_run = serializers.CharField(
        required=False, allow_blank=True,
        help_text="The experiment's run: projects/<p>/locations/<l>/metadataStores/<store>/"
                  "contexts/<experiment>-<run>")
    job_spec_extra = serializers.DictField(required=False, help_text="CustomJobSpec fields "
                                           "passed through: tensorboard, experiment, ...")
    encryption_spec = serializers.DictField(required=False)
    recovery = RecoverySerializer(required=False, allow_null=True)
    # Checked by the composer (vertexplan/composer/checks.py), whose errors name the valid
    # values and, for priority, the team's cap.
    priority = serializers.CharField(
        required=False, max_length=20,
        help_text="low, normal or high: the order in the control plane's queue (at most the "
                  "team's cap; used when the site's admission queue is on).")
    framework = serializers.CharField(
        required=False, max_length=40,
        help_text="Which framework's lines to read from a job of your own (hf_trainer, "
                  "lightning, accelerate, deepspeed, torchtitan, maxtext...); leave it out "
                  "to tell from the command and the first lines.")


def plain(value: Any) -> Any:
    """validated_data (OrderedDicts, ReturnLists) as plain JSON values, as a job stores them."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


class TemplateSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True,
                                       default=None)

    class Meta:
        model = JobTemplate
        fields = ["id", "team", "name", "description", "request", "created_by", "created_at",
                  "updated_at"]
        read_only_fields = ["id", "team", "created_by", "created_at", "updated_at"]
