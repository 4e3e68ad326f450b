"""Forms of the serving pages; the rules themselves live in lifecycle.py and registry.py."""

from __future__ import annotations

from typing import Any

from django import forms

from controlplane.runs import access as runs_access
from controlplane.serving.models import Deployment, Slo
from controlplane.serving.prober import MIN_INTERVAL_S
from controlplane.teams import access


class EndpointForm(forms.Form):
    team = forms.ModelChoiceField(queryset=None, empty_label=None)
    name = forms.CharField(max_length=100)
    probe_interval_s = forms.FloatField(initial=10.0, min_value=MIN_INTERVAL_S, max_value=3600,
                                        label="Probe every (s)")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = access.submit_teams(user).order_by("name")


class RegisterForm(forms.Form):
    job = forms.ModelChoiceField(queryset=None, empty_label=None)
    step = forms.IntegerField(required=False, min_value=0,
                              help_text="A checkpoint step; empty: the final export.")
    display_name = forms.CharField(max_length=128, required=False)

    def __init__(self, *args: Any, user: Any, jobs: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        teams = access.submit_teams(user)
        queryset = jobs if jobs is not None else runs_access.visible_jobs(user)
        self.fields["job"].queryset = queryset.filter(team__in=teams).order_by("-created_at")[:200]


class DeployForm(forms.Form):
    model = forms.ModelChoiceField(queryset=None, empty_label=None)
    machine_type = forms.CharField(max_length=64, initial="n1-standard-4")
    accelerator_type = forms.CharField(max_length=64, required=False)
    accelerator_count = forms.IntegerField(min_value=0, initial=0)
    min_replicas = forms.IntegerField(min_value=1, max_value=1000, initial=1)
    max_replicas = forms.IntegerField(min_value=1, max_value=1000, initial=1)
    autoscaling_metric = forms.ChoiceField(choices=Deployment.Metric.choices, required=False)
    autoscaling_target = forms.IntegerField(min_value=0, max_value=100, initial=0)
    traffic_percent = forms.IntegerField(min_value=1, max_value=100, initial=100)

    def __init__(self, *args: Any, entries: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].queryset = entries


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
