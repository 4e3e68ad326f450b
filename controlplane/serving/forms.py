"""Forms of the serving pages; the rules themselves live in lifecycle.py and registry.py."""

from __future__ import annotations

from typing import Any

from django import forms
from django.forms.models import ModelChoiceIterator
from django.urls import reverse

from controlplane.runs import access as runs_access
from controlplane.serving import endpoint_access, hardware
from controlplane.serving.models import Deployment, Endpoint, ModelEntry, Slo
from controlplane.serving.prober import MIN_INTERVAL_S
from controlplane.teams import access
from vertexplan.catalog import allowed_accelerators, get_machine_type


class EndpointForm(forms.Form):
    team = forms.ModelChoiceField(queryset=None, empty_label=None)
    name = forms.CharField(max_length=100)
    probe_interval_s = forms.FloatField(initial=10.0, min_value=MIN_INTERVAL_S, max_value=3600,
                                        label="Probe every (s)")
    access = forms.ChoiceField(choices=Endpoint.Access.choices, initial="public",
                               required=False)
    psc_project_allowlist = forms.CharField(
        required=False, label="Allowed projects (private)",
        help_text="Project ids or numbers whose VPCs may connect, comma-separated.")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = access.submit_teams(user).order_by("name")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        kind = cleaned.get("access") or Endpoint.Access.PUBLIC
        projects = [p.strip() for p in (cleaned.get("psc_project_allowlist") or "").split(",")
                    if p.strip()]
        try:
            cleaned["psc_project_allowlist"] = endpoint_access.check(kind, projects)
        except endpoint_access.AccessError as exc:
            self.add_error(exc.field, str(exc))
        cleaned["access"] = kind
        return cleaned


# The register form's job menu lists this many of the newest jobs.
MENU_JOBS = 200


class _NewestFirst(ModelChoiceIterator):
    """The menu's choices: the field's newest jobs only. The field itself checks a submitted
    job against its whole queryset, which a slice would break (Django's check filters it: a
    sliced queryset cannot be filtered), and accepts a job older than the menu, as the job
    page's own form sends."""

    def __init__(self, field: forms.ModelChoiceField) -> None:
        super().__init__(field)
        if self.queryset is not None:
            self.queryset = self.queryset[:MENU_JOBS]


class NewestJobField(forms.ModelChoiceField):
    iterator = _NewestFirst


class RegisterForm(forms.Form):
    job = NewestJobField(queryset=None, empty_label="(none: a Hugging Face model folder)",
                         required=False)
    format = forms.ChoiceField(choices=ModelEntry.Format.choices, initial="product",
                               required=False, help_text="hf: a Hugging Face model (the job's "
                               "--export-hf final export, or the folder below), checked before "
                               "it is registered.")
    artifact_uri = forms.CharField(
        max_length=500, required=False, label="Model folder (hf)",
        widget=forms.TextInput(attrs={"class": "mono", "spellcheck": "false",
                                      "placeholder": "gs://<your team's prefix>/..."}),
        help_text="Any folder under your team's output prefix; empty: the job's final export.")
    team = forms.ModelChoiceField(queryset=None, required=False,
                                  help_text="The folder's team, when no job is chosen.")
    step = forms.IntegerField(required=False, min_value=0,
                              help_text="A checkpoint step; empty: the final export.")
    display_name = forms.CharField(max_length=128, required=False)
    image_uri = forms.CharField(
        max_length=512, required=False, label="Serving image",
        widget=forms.TextInput(attrs={"list": "serving-images"}),
        help_text="Empty: the product's own server (vllm: Model Garden's vLLM container); or "
        "one of your team's images (it must exist) or a prebuilt container.")
    runtime = forms.ChoiceField(choices=ModelEntry.Runtime.choices, initial="eager",
                                required=False, help_text="compiled: torch.compile before the "
                                "replica answers (slower start, faster answers); aot: compiled "
                                "into a package before upload, loaded by every replica at once; "
                                "triton: NVIDIA Triton serving the model's ONNX repository "
                                "(the image: your Artifact Registry copy of Triton's); "
                                "tensorrt: the same, serving a TensorRT engine built on an "
                                "NVIDIA_L4 (deployed only on NVIDIA_L4); vllm (hf only): "
                                "Model Garden's vLLM container on the machine's GPUs.")
    # The vllm runtime's machine (its GPUs are the tensor parallel size) and settings.
    machine_type = forms.CharField(max_length=64, required=False, label="Machine (vllm)")
    accelerator_type = forms.CharField(max_length=64, required=False,
                                       label="Accelerator (vllm on n1)")
    accelerator_count = forms.IntegerField(min_value=0, max_value=16, required=False)
    max_model_len = forms.IntegerField(min_value=1, required=False,
                                       help_text="vllm: default 4096 or the model's context.")
    dtype = forms.ChoiceField(choices=[("", "auto"), ("bfloat16", "bfloat16"),
                                       ("float16", "float16"), ("float32", "float32")],
                              required=False)
    gpu_memory_utilization = forms.FloatField(required=False, min_value=0.05, max_value=0.99,
                                              help_text="vllm: default 0.9.")

    VLLM_FIELDS = ("machine_type", "accelerator_type", "accelerator_count", "max_model_len",
                   "dtype", "gpu_memory_utilization")

    def vllm_settings(self) -> dict[str, Any]:
        """The vllm fields that were filled in (the rest take Model Garden's defaults)."""
        return {k: self.cleaned_data[k] for k in self.VLLM_FIELDS
                if self.cleaned_data.get(k) not in (None, "")}

    def clean_format(self) -> str:
        return self.cleaned_data.get("format") or ModelEntry.Format.PRODUCT

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if (not cleaned.get("job") and "job" not in self.errors
                and cleaned.get("format") != ModelEntry.Format.HF):
            self.add_error("job", "choose the job whose checkpoint or export to register")
        return cleaned

    def clean_runtime(self) -> str:
        return self.cleaned_data.get("runtime") or ModelEntry.Runtime.EAGER

    def __init__(self, *args: Any, user: Any, jobs: Any = None,
                 image_teams: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The picker (js/image_picker.js) asks the API for each of these teams' images.
        self.fields["image_uri"].widget.attrs.update({
            "data-url": reverse("api-serving-images"), "data-teams": ",".join(image_teams or [])})
        teams = access.submit_teams(user)
        queryset = jobs if jobs is not None else runs_access.visible_jobs(user)
        self.fields["job"].queryset = queryset.filter(team__in=teams).order_by("-created_at")
        self.fields["team"].queryset = teams.order_by("name")


class DataSelect(forms.Select):
    """A menu whose options carry data-* attributes (by option value), which the deploy form's
    script reads: each machine's price and GPUs, each model's runtime."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.option_data: dict[str, dict[str, str]] = {}

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(name, value, *args, **kwargs)
        key = str(value.value if hasattr(value, "value") else value)
        option["attrs"].update(self.option_data.get(key, {}))
        return option


class DeployForm(forms.Form):
    model = forms.ModelChoiceField(queryset=None, empty_label=None, widget=DataSelect)
    # Menus (hardware.py), checked as text: a value outside them gets an error that says why.
    machine_type = forms.CharField(max_length=64, initial="n1-standard-4", widget=DataSelect,
                                   help_text="Per replica and hour; a2, a3 and g2 machines "
                                   "come with their GPUs, n1 machines take the accelerator "
                                   "chosen below.")
    accelerator_type = forms.CharField(max_length=64, required=False, widget=DataSelect,
                                       label="Accelerator (n1 machines)")
    accelerator_count = forms.IntegerField(min_value=0, initial=0)
    min_replicas = forms.IntegerField(min_value=1, max_value=1000, initial=1)
    max_replicas = forms.IntegerField(min_value=1, max_value=1000, initial=1)
    autoscaling_metric = forms.ChoiceField(choices=Deployment.Metric.choices, required=False)
    autoscaling_target = forms.IntegerField(min_value=0, max_value=100, initial=0)
    traffic_percent = forms.IntegerField(min_value=1, max_value=100, initial=100)

    def __init__(self, *args: Any, entries: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].queryset = entries
        self.fields["model"].widget.option_data = {
            str(e.pk): {"data-runtime": e.runtime, "data-gpu": e.engine_accelerator
                        or hardware.TENSORRT_DEFAULT_GPU}
            if e.runtime == ModelEntry.Runtime.TENSORRT else {"data-runtime": e.runtime}
            for e in entries}
        self._menus()
        # The price of what was chosen, once the form is valid (hardware.Price).
        self.price: hardware.Price | None = None

    def _menus(self) -> None:
        cpu, gpu, machine_data = [], [], {}
        for machine in hardware.serving_machines():
            price = hardware.hourly(machine.name, *(hardware.built_in_gpus(machine)
                                                    or ("", 0)))
            (cpu if machine.kind == "cpu" and machine.accelerators == "none" else gpu).append(
                (machine.name, hardware.machine_label(machine, price)))
            machine_data[machine.name] = {
                "data-micros": "" if price.micros is None else str(price.micros),
                "data-gpus": ",".join(allowed_accelerators(machine.name)),
                "data-takes-gpus": "1" if machine.accelerators == "optional" else ""}
        widget = self.fields["machine_type"].widget
        widget.choices = [("CPU machines", cpu), ("GPU machines", gpu)]
        widget.option_data = machine_data
        accelerators, accelerator_data = [("", "none")], {}
        for name in hardware.attachable_gpus():
            micros = hardware.gpu_hourly(name)
            accelerators.append((name, f"{name}: +{hardware.usd_per_hour(micros)} each"))
            accelerator_data[name] = {"data-micros": "" if micros is None else str(micros)}
        widget = self.fields["accelerator_type"].widget
        widget.choices = accelerators
        widget.option_data = accelerator_data

    def clean_machine_type(self) -> str:
        machine_type = self.cleaned_data["machine_type"].strip()
        if refusal := hardware.machine_refusal(machine_type):
            raise forms.ValidationError(refusal)
        return machine_type

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        machine_type, entry = cleaned.get("machine_type"), cleaned.get("model")
        if not machine_type:
            return cleaned
        machine = get_machine_type(machine_type)
        # A machine that comes with its GPUs is deployed with them, as the menu shows it.
        built_in = hardware.built_in_gpus(machine) if machine is not None else None
        if built_in is not None and not cleaned.get("accelerator_type"):
            cleaned["accelerator_type"], cleaned["accelerator_count"] = built_in
        accelerator = cleaned.get("accelerator_type") or ""
        if entry is not None and (
                refusal := hardware.runtime_refusal(entry, machine_type, accelerator)):
            self.add_error("machine_type", refusal)
            return cleaned
        self.price = hardware.hourly(machine_type, accelerator,
                                     cleaned.get("accelerator_count") or 0)
        return cleaned


class AutoscalingForm(forms.Form):
    min_replicas = forms.IntegerField(min_value=1, max_value=1000)
    max_replicas = forms.IntegerField(min_value=1, max_value=1000)
    autoscaling_metric = forms.ChoiceField(choices=Deployment.Metric.choices, required=False)
    autoscaling_target = forms.IntegerField(min_value=0, max_value=100, initial=0)


class SloForm(forms.ModelForm):
    class Meta:
        model = Slo
        fields = ["p95_ms", "error_rate", "window_s", "min_samples", "enabled"]
        labels = {"p95_ms": "p95 target (ms)", "error_rate": "Error rate target (0-1)",
                  "window_s": "Window (s)", "min_samples": "Min. probes"}

    def clean_error_rate(self) -> float:
        value = self.cleaned_data["error_rate"]
        if not 0.0 <= value <= 1.0:
            raise forms.ValidationError("a fraction from 0 to 1 (0.01 = 1%)")
        return value


class ProbeForm(forms.Form):
    probe_enabled = forms.BooleanField(required=False, label="Probe")
    probe_interval_s = forms.FloatField(min_value=MIN_INTERVAL_S, max_value=3600,
                                        label="Every (s)")
