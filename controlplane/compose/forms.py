"""The compose form: flat fields that map onto a job request (the dict vertexplan.composer reads).

Only the shape of each value is checked here (an integer is an integer). Whether the machines,
accelerators, strategy, disks and replicas make a valid CustomJob is the composer's decision,
made in ``validation.check`` exactly as for the API, and its messages are attached to the fields.
The mapping between these fields and a request lives in ``vertexplan.composer.fields``.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from django import forms
from django.conf import settings
from django.urls import reverse

from controlplane.compose import recovery_fields, regions, validation, wording
from controlplane.core import bounded
from controlplane.teams import access
from controlplane.teams.models import Team
from vertexplan import catalog, composer
from vertexplan.composer import fields as mapping
from vertexplan.composer import parallelism
from vertexplan.composer.request import REDUCTION_SERVER_MACHINE

NO_ACCELERATOR = mapping.NO_ACCELERATOR
SAME_AS_CHIEF = mapping.SAME_AS_CHIEF
RESTART_CHOICES = [
    ("auto", "Auto: restart all replicas together when there is more than one"),
    ("yes", "Yes: a failed replica restarts the whole job"),
    ("no", "No: only the failed replica restarts"),
]
POOL2_CHOICES = [("", "none"), ("reduction_server", "Reduction Server (GPU all-reduce)"),
                 ("parameter_servers", "Parameter servers (run the job's container)")]
PRECISION_CHOICES = [("", "the trainer's default"), ("fp32", "fp32"), ("bf16", "bf16"),
                     ("fp16", "fp16 (dynamic loss scaling)")]

Choices = list[tuple[str, Any]]


# Choices are callables so the catalogue is read when a form is built, not at import.
def _machine_choices() -> Choices:
    return catalog.machine_type_choices()


def _accelerator_choices() -> Choices:
    return [(NO_ACCELERATOR, "none (CPU or TPU)"), *catalog.accelerator_type_choices()]


def _disk_choices() -> Choices:
    return catalog.boot_disk_type_choices()


def _same_as_chief(choices: Choices) -> Choices:
    return [(SAME_AS_CHIEF, "same as chief"), *choices]


# On a TPU slice the strategy is the framework the built-in trainer runs in.
TPU_FRAMEWORKS = {"tpu_jax": "JAX", "tpu_xla": "PyTorch/XLA"}


def _strategy_choices() -> Choices:
    """Grouped by hardware: a TPU machine takes one of the two TPU frameworks, anything else a
    GPU/CPU strategy (the composer refuses the other pairings, naming the valid ones)."""
    gpu = [(name, f"{name}: {composer.STRATEGIES[name]}")
           for name in parallelism.GPU_STRATEGIES]
    tpu = [(name, f"{TPU_FRAMEWORKS[name]} ({name})") for name in parallelism.TPU_STRATEGIES]
    return [("GPU or CPU machines", gpu), ("TPU slices: framework", tpu)]


def _topology_choices() -> Choices:
    choices: Choices = [("", "none (not a TPU slice machine)")]
    for machine in catalog.list_machine_types(kind="tpu"):
        options = catalog.tpu_topology_choices(machine.name)
        if options:
            choices.append((machine.name, options))
    return choices


def _int(label: str, **kwargs: Any) -> forms.IntegerField:
    return forms.IntegerField(label=label, required=False, **kwargs)


def _float(label: str, **kwargs: Any) -> forms.FloatField:
    return forms.FloatField(label=label, required=False, **kwargs)


def _text(label: str, **kwargs: Any) -> forms.CharField:
    return forms.CharField(label=label, required=False, **kwargs)


def _area(label: str, rows: int = 3, **kwargs: Any) -> forms.CharField:
    return forms.CharField(label=label, required=False,
                           widget=forms.Textarea(attrs={"rows": rows}), **kwargs)


def _flag(label: str, **kwargs: Any) -> forms.BooleanField:
    return forms.BooleanField(label=label, required=False, **kwargs)


def _pool_fields(role: str, *, inherit: bool, machine_initial: str = "") -> dict[str, Any]:
    wrap = _same_as_chief if inherit else (lambda c: c)
    return {
        f"{role}_replica_count": _int("Replicas", initial=1),
        f"{role}_machine_type": forms.ChoiceField(
            label="Machine type", required=False, initial=machine_initial,
            choices=lambda: wrap(_machine_choices()) if inherit
            else [("", "choose"), *_machine_choices()]),
        f"{role}_accelerator_type": forms.ChoiceField(
            label="Accelerator", required=False,
            choices=lambda: wrap(catalog.accelerator_type_choices()) if inherit
            else _accelerator_choices()),
        f"{role}_accelerator_count": _int("Accelerators per replica", min_value=0),
        f"{role}_boot_disk_type": forms.ChoiceField(
            label="Boot disk", required=False, choices=lambda: _same_as_chief(_disk_choices())
            if inherit else [("", "pd-ssd (default)"), *_disk_choices()]),
        f"{role}_boot_disk_size_gb": _int("Boot disk GB"),
    }


class JobForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none(), to_field_name="slug",
                                  empty_label="choose a team")
    # Not required here: the catalogue says what a job name must be, in its own words.
    name = forms.CharField(max_length=100, required=False)
    strategy = forms.ChoiceField(choices=_strategy_choices, initial="ddp")
    precision = forms.ChoiceField(choices=PRECISION_CHOICES, required=False)
    # What Vertex pulls a training image from (vertexplan/catalog/rules/containers.py).
    image_uri = forms.CharField(
        label="Image URI", required=False, max_length=512,
        help_text="Empty: the built-in trainer image. Vertex pulls a training image from "
                  "Artifact Registry (<region>-docker.pkg.dev/<project>/<repository>/<image>) "
                  "or Docker Hub only: push an image from any other registry (nvcr.io, "
                  "ghcr.io, ...) to Artifact Registry first and name that copy.")
    image_entrypoint = _flag("Run the image's own ENTRYPOINT (no command)")
    command = _text("Command", help_text="Empty: the built-in trainer (python -m "
                    "trainers.train; on a TPU slice python -m trainers.jax or trainers.xla), "
                    "with the strategy's flags before the arguments.")
    args = forms.CharField(required=False, initial=shlex.join(composer.DEFAULT_TRAINER_ARGS),
                           help_text="Arguments, split as a shell would.")
    # A Python package run in one of Vertex's prebuilt images (pythonPackageSpec), in place
    # of the image and command above.
    pkg_executor_image_uri = _text("Prebuilt image", max_length=512, help_text="One of "
                                   "Vertex's prebuilt training images; with a package, instead "
                                   "of the image URI and command.")
    pkg_package_uris = _area("Package URIs", rows=2, help_text="gs:// URIs of the package "
                             "(sdist or wheel) and its dependencies, one a line.")
    pkg_python_module = _text("Python module", max_length=256, help_text="e.g. trainer.task; "
                              "the arguments and environment go to it.")
    env = _area("Environment", strip=False, help_text="NAME=value, one a line (at most 100, "
                "names are letters, digits and _).")

    # Strategy settings (shown for their strategy)
    fsdp_mode = forms.ChoiceField(label="FSDP mode", required=False, initial="full_shard",
                                  choices=[(m, m) for m in parallelism.FSDP_MODES])
    fsdp_shard_size = _int("hybrid_shard group size", min_value=0,
                           help_text="0 or empty: the devices of one replica.")
    ds_offload_optimizer = _flag("Offload optimizer states to CPU")
    ds_offload_params = _flag("Offload parameters to CPU (ZeRO-3)")
    ds_gradient_clipping = _float("Gradient clipping", min_value=0)
    ds_optimizer = forms.ChoiceField(label="DeepSpeed optimizer", required=False, choices=[
        ("", "none (the training code builds its own)"), ("AdamW", "AdamW"), ("Adam", "Adam")])
    ds_lr = _float("Learning rate")
    ds_beta1 = _float("beta1")
    ds_beta2 = _float("beta2")
    ds_eps = _float("eps")
    ds_weight_decay = _float("Weight decay")
    ds_scheduler = forms.ChoiceField(label="DeepSpeed scheduler", required=False, choices=[
        ("", "none"), ("WarmupLR", "WarmupLR"), ("WarmupDecayLR", "WarmupDecayLR")])
    ds_warmup_steps = _int("Warmup steps", min_value=0)
    ds_total_steps = _int("Total steps (WarmupDecayLR)", min_value=1)
    ds_overlap_comm = _flag("overlap_comm")
    ds_reduce_scatter = _flag("reduce_scatter")
    ds_contiguous_gradients = _flag("contiguous_gradients")
    ds_allgather_bucket_size = _int("allgather_bucket_size", min_value=1)
    ds_reduce_bucket_size = _int("reduce_bucket_size", min_value=1)
    batch_global = _int("Global batch", help_text="= micro batch x gradient accumulation x "
                        "data-parallel size; give any two.")
    batch_micro = _int("Micro batch per device")
    batch_accumulation = _int("Gradient accumulation steps")
    parallel_tensor = _int("Tensor parallel degree", initial=1)
    parallel_pipeline = _int("Pipeline parallel degree", initial=1)
    parallel_schedule = forms.ChoiceField(
        label="Pipeline schedule", required=False,
        choices=[("", "default (1f1b)"), *((s, s) for s in parallelism.PIPELINE_SCHEDULES)])
    parallel_virtual_stages = _int("Stages per pipeline rank", min_value=1,
                                   help_text="2 or more with interleaved_1f1b.")
    parallel_sequence = _flag("Sequence parallel (with tensor parallelism)")
    tpu_sharding = forms.ChoiceField(label="TPU memory layout", required=False, choices=[
        ("", "replicated (data parallel)"), ("fsdp", "sharded (FSDP-style)")])

    # Memory plan
    model_parameters_b = _float("Parameters (billions)", help_text="Gives the memory plan.")
    model_trainable_b = _float("Trainable (billions)", help_text="Empty: all of them.")
    model_hidden_size = _int("Hidden size")
    model_layers = _int("Layers")
    model_sequence_length = _int("Sequence length")
    model_activation_checkpointing = forms.ChoiceField(
        label="Activation checkpointing", required=False, choices=mapping.CHECKPOINTING_CHOICES)

    chief_machine_type = forms.ChoiceField(label="Machine type", choices=_machine_choices,
                                           initial="n1-standard-4")
    chief_accelerator_type = forms.ChoiceField(label="Accelerator",
                                               choices=_accelerator_choices,
                                               initial=NO_ACCELERATOR)
    chief_accelerator_count = forms.IntegerField(label="Accelerators per replica", min_value=0,
                                                 initial=0)
    chief_tpu_topology = forms.ChoiceField(label="TPU topology", required=False,
                                           choices=_topology_choices)
    # Its menu is the regions that offer the chosen hardware, set in __init__ and refreshed
    # by compose.js (job-regions) as the hardware changes. Blank (a client that posts none):
    # the server's region, as before the field existed.
    region = forms.CharField(label="Region", required=False, max_length=40,
                             widget=forms.Select, help_text="Only the regions that offer the "
                             "chosen machines, accelerators or TPU.")
    chief_boot_disk_type = forms.ChoiceField(label="Boot disk", choices=_disk_choices,
                                             initial="pd-ssd")
    # No min_value: the catalogue's limit and message are the ones a user must see.
    chief_boot_disk_size_gb = forms.IntegerField(label="Boot disk GB", initial=100)

    # The pools' own fields (<role>_machine_type, ...) are added in __init__.
    workers_enabled = _flag("Add a workers pool")
    pool2 = forms.ChoiceField(label="workerpool2", required=False, choices=POOL2_CHOICES)
    evaluators_enabled = _flag("Add an evaluators pool")

    scheduling_strategy = forms.ChoiceField(label="Provisioning", initial="STANDARD",
                                            required=False, choices=catalog.strategy_choices)
    restart_job_on_worker_restart = forms.ChoiceField(label="Restart job on worker restart",
                                                      choices=RESTART_CHOICES, initial="auto")
    disable_retries = _flag("Disable retries (fail on the first error)")
    timeout_hours = _float("Timeout (hours)", min_value=0,
                           help_text="Empty: Vertex's 7 days. FLEX_START: at most 7 days.")
    max_wait_hours = _float("Max wait for capacity (hours)", min_value=0, max_value=24 * 7,
                            help_text="FLEX_START only; 0 waits without limit.")

    base_output_directory = _text("Output directory (gs://)", help_text="Checkpoints, model and "
                                  "logs (AIP_CHECKPOINT_DIR ...). Empty: the job's own folder.")
    nfs_mounts = _area("NFS mounts", rows=2, help_text="SERVER:/path mount_point, one a line; "
                       "mounted at /mnt/nfs/<mount_point>.")

    network = _text("VPC network", help_text="projects/<project number>/global/networks/<name> "
                    "(peered with Google's services)")
    reserved_ip_ranges = _text("Reserved IP ranges", help_text="Comma-separated range names "
                               "of the peered network.")
    psc_network_attachment = _text("PSC interface network attachment")
    enable_web_access = _flag("Interactive shell (web access)")
    service_account = _text("Service account", help_text="Empty: Vertex's Custom Code "
                            "Service Agent.")
    labels = _area("Labels", rows=2, help_text="key=value, one a line (lowercase).")
    tensorboard = _text("Vertex TensorBoard", help_text="projects/<p>/locations/<l>/"
                        "tensorboards/<id>: the job's TensorBoard logs go there.")
    experiment = _text("Vertex Experiment", help_text="projects/<p>/locations/<l>/"
                       "metadataStores/default/contexts/<experiment>")
    experiment_run = _text("Experiment run", help_text="projects/<p>/locations/<l>/"
                           "metadataStores/default/contexts/<experiment>-<run>")

    advanced = _area("Advanced (JSON)", rows=4, help_text="Request fields without an input "
                     "here (a pool's own image or command, reservations, DeepSpeed extras ...),"
                     " laid over the form's.")

    def __init__(self, *args: Any, user: Any, team_rules: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # False for an export: the job is judged as Vertex would, not by the team's policy.
        self.team_rules = team_rules
        self.fields.update(_pool_fields("workers", inherit=True))
        self.fields.update({k: v for k, v in _pool_fields(
            "reduction_server", inherit=False, machine_initial=REDUCTION_SERVER_MACHINE).items()
            if "accelerator" not in k})
        self.fields.update(_pool_fields("parameter_servers", inherit=False))
        self.fields.update(_pool_fields("evaluators", inherit=False))
        self.fields.update(recovery_fields.form_fields())
        teams = access.submit_teams(user).order_by("name")
        self.fields["team"].queryset = teams
        if len(teams) == 1 and not self.initial.get("team"):
            self.initial["team"] = teams[0].slug
        self.fields["image_uri"].widget.attrs["placeholder"] = settings.CP_DEFAULT_IMAGE
        self.checked: validation.CheckedRequest | None = None
        # Shown above the form: what the form changed of the job it was opened with.
        self.warnings: list[str] = []
        self._region_menu()

    def _value(self, name: str) -> Any:
        """A field's value as posted, or as the unbound form shows it."""
        if self.is_bound:
            return self.data.get(self.add_prefix(name))
        return self.initial.get(name, self.fields[name].initial)

    def hardware(self) -> list[tuple[str, str]]:
        """(machine type, accelerator type) of the chief and each pool switched on; a
        blank worker field is the chief's."""
        chief = (self._value("chief_machine_type") or "",
                 self._value("chief_accelerator_type") or "")
        pairs = [chief]
        if self._value("workers_enabled"):
            pairs.append((self._value("workers_machine_type") or chief[0],
                          self._value("workers_accelerator_type") or chief[1]))
        if self._value("evaluators_enabled"):
            pairs.append((self._value("evaluators_machine_type") or "",
                          self._value("evaluators_accelerator_type") or ""))
        return pairs

    def _region_menu(self) -> None:
        field = self.fields["region"]
        field.widget.attrs["data-source"] = reverse("job-regions")
        field.initial, field.widget.choices, replaced = regions.menu(
            self.hardware(), self._value("region"), bound=self.is_bound)
        if replaced:
            self.initial["region"] = field.initial
            self.warnings.append(replaced)

    def clean_args(self) -> list[str]:
        return self._split("args")

    def clean_command(self) -> list[str]:
        return self._split("command")

    def _split(self, name: str) -> list[str]:
        try:
            return shlex.split(self.cleaned_data.get(name) or "")
        except ValueError as exc:  # an unclosed quote
            raise forms.ValidationError(f"cannot split the arguments: {exc}") from exc

    def clean_advanced(self) -> dict[str, Any]:
        text = (self.cleaned_data.get("advanced") or "").strip()
        if not text:
            return {}
        try:
            value = bounded.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise forms.ValidationError('expected a JSON object, e.g. {"evaluators": {...}}')
        return value

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        # A field that did not parse would reach the composer as a default and produce
        # misleading errors elsewhere; the team alone is checked by validation.check itself.
        if any(name in self.errors for name in self.fields if name != "team"):
            return cleaned
        try:
            request = self.to_request()
        except ValueError as exc:
            self.add_error(None, str(exc))
            return cleaned
        self.check_request(request, cleaned.get("team"))
        self._check_menu_region(cleaned.get("region"))
        return cleaned

    def _check_menu_region(self, chosen: str | None) -> None:
        composition = self.checked.composition if self.checked is not None else None
        if "region" not in (self.cleaned_data.get("advanced") or {}) and \
                "region" not in self.errors and composition is not None:
            wrong = regions.menu_problem(chosen, composition.custom_job)
            if wrong:
                self.add_error("region", wrong)

    def check_request(self, request: dict[str, Any], team: Team | None) -> None:
        """Validate the job on its own (a sweep's trial job is checked within its sweep)."""
        self.checked = validation.check(validation.read_request(request), team,
                                        team_rules=self.team_rules)
        self.attach(self.checked.errors)

    def attach(self, errors: dict[str, list[str]]) -> None:
        """Put errors keyed by request field path on the fields they name."""
        advanced = self.cleaned_data.get("advanced") or {}
        for key, messages in errors.items():
            field = self.field_for(key)
            if (field in (None, "strategy") or key == "region") and key and \
                    _written_in(advanced, key):
                # A key typed in the box (an unknown one, a DeepSpeed extra): shown under it.
                field = "advanced"
            if field == "team" and "team" in self.errors:
                continue  # "select a valid choice" already says it
            for message in messages:
                shown = message if field or not key else f"{key}: {message}"
                self.add_error(field, wording.for_the_form(shown))

    def field_for(self, key: str) -> str | None:
        """The form field an error key of validation.check belongs to; None: the whole form."""
        if not key:
            return None
        if key == "recovery" or key.startswith("recovery."):
            return recovery_fields.field_for(key)
        if key == "spot":
            return "scheduling_strategy"
        if key.split("[", 1)[0] in mapping.SETTINGS:
            return mapping.SETTINGS[key.split("[", 1)[0]]
        if key == "python_package":
            return "pkg_python_module"
        head, dot, rest = key.partition(".")
        if dot and head in composer.POOL_ROLES:
            name = f"{head}_{rest.split('.', 1)[0].split('[', 1)[0]}"
            return name if name in self.fields else None
        for end in range(key.count("."), 0, -1):
            prefix = key.rsplit(".", key.count(".") - end + 1)[0]
            if prefix in mapping.SETTINGS:
                return mapping.SETTINGS[prefix]
        if key.startswith(("env.", "env[")) or key == "env":
            return "env"  # a variable's name or value: under the environment field
        name = key.split("[", 1)[0]
        if name in self.fields and name not in ("workers", "advanced"):
            return name
        if head in ("deepspeed", "fsdp", "batch", "parallelism"):
            return "strategy"
        return None

    def to_request(self) -> dict[str, Any]:
        request = mapping.request_from_fields(self.cleaned_data)
        if self.cleaned_data.get("region"):
            request["region"] = self.cleaned_data["region"]
        if self.cleaned_data.get("image_uri"):
            request["image_uri"] = self.cleaned_data["image_uri"].strip()
        policy = recovery_fields.request_from_form(self.cleaned_data)
        if policy is not None:
            request["recovery"] = policy
        return mapping.merge(request, self.cleaned_data.get("advanced") or {})


def _written_in(advanced: dict[str, Any], key: str) -> bool:
    """Whether the request path ``key`` ("chief.use_spot") was written in the advanced JSON."""
    try:
        found, _ = catalog.resolve_path(advanced, key)
    except ValueError:
        return False
    return found


def initial_from_request(request: dict[str, Any], team_slug: str = "") -> dict[str, Any]:
    """The form's initial values for a stored job request: how a job is cloned or imported."""
    request = recovery_fields.labels_into_request(request)
    initial = mapping.fields_from_request(request)
    initial.update(recovery_fields.form_initial(request))
    initial["team"] = team_slug
    if "args" not in initial:
        # No arguments: the trainer's defaults for the built-in trainer, none for your command.
        own = request.get("command") or request.get("image_entrypoint")
        initial["args"] = "" if own else shlex.join(composer.DEFAULT_TRAINER_ARGS)
    extra = mapping.leftovers(request)
    extra.pop("recovery", None)  # the recovery fields hold it
    if extra.get("region"):
        initial["region"] = extra.pop("region")  # the region field holds it
    if extra:
        initial["advanced"] = json.dumps(extra, indent=2)
    return initial

