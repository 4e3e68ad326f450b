"""The model page (/serving/models/<id>/): what the model is, and its runtime trials, the newest
one's table (each runtime's throughput, p50/p99 latency and cost per million tokens, the one
chosen) and a form that starts another (trials.py). Apart from views.py, which is near its size
limit; the rules are the same: another team's model is a 404, starting a trial takes a member's
or an admin's role."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from controlplane.serving import access, hardware, trials
from controlplane.serving.models import ModelEntry
from controlplane.serving.views import errors_text
from vertexplan import runtime_choice
from vertexplan.pricing import display_usd

TRIALS_SHOWN = 10


def _bounded(name: str, initial: int, label: str) -> forms.IntegerField:
    low, high = runtime_choice.LIMITS[name]
    return forms.IntegerField(min_value=low, max_value=high, initial=initial, label=label)


class TrialForm(forms.Form):
    machine_type = forms.CharField(max_length=64, initial="n1-standard-4",
                                   widget=forms.TextInput(attrs={"list": "trial-machines"}))
    accelerator_type = forms.CharField(max_length=64, required=False)
    accelerator_count = forms.IntegerField(min_value=0, max_value=16, initial=0, required=False)
    prompt_tokens = _bounded("prompt_tokens", 32, "Prompt tokens")
    output_tokens = _bounded("output_tokens", 16, "Output tokens")
    concurrency = _bounded("concurrency", 4, "Concurrent requests")
    requests = _bounded("requests", 16, "Requests per runtime")
    p99_target_ms = _bounded("p99_target_ms", 1000, "p99 target (ms)")


def table(trial: Any) -> list[dict[str, Any]]:
    """The trial's rows as the page shows them: its cost in dollars, whether it was chosen."""
    rows = []
    for row in trial.results or []:
        cost = row.get("cost_per_million_micros")
        rows.append({**row, "cost": display_usd(cost, 4) if isinstance(cost, int) else "",
                     "chosen": row.get("runtime") == trial.chosen_runtime})
    return rows


@login_required
@require_GET
def model_detail(request: HttpRequest, pk: int) -> HttpResponse:
    entry = get_object_or_404(access.visible_entries(request.user), pk=pk)
    shown = list(entry.runtime_trials.all()[:TRIALS_SHOWN])
    latest = shown[0] if shown else None
    return render(request, "serving/model.html", {
        "entry": entry, "latest": latest, "rows": table(latest) if latest else [],
        "hourly": display_usd(latest.hourly_micros) if latest and latest.hourly_micros
        is not None else "",
        "earlier": shown[1:], "form": TrialForm(),
        "can_change": access.can_change(request.user, entry.team),
        "machines": [m.name for m in hardware.serving_machines()],
        # The trial's choice, preselected in a form that registers the weights to serve so.
        "runtimes": ModelEntry.Runtime.choices,
    })


@login_required
@require_POST
def model_trial(request: HttpRequest, pk: int) -> HttpResponse:
    entry = get_object_or_404(access.visible_entries(request.user), pk=pk)
    if not access.can_change(request.user, entry.team):
        raise PermissionDenied("your role in this team cannot change serving resources")
    form = TrialForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"No trial started: {errors_text(form)}")
        return redirect("serving-model", pk=pk)
    data = dict(form.cleaned_data)
    try:
        traffic = runtime_choice.Traffic(**{k: data.pop(k) for k in runtime_choice.LIMITS})
        trials.start(entry, request.user, traffic=traffic,
                     machine_type=data["machine_type"],
                     accelerator_type=data.get("accelerator_type") or "",
                     accelerator_count=data.get("accelerator_count") or 0)
    except (runtime_choice.TrafficError, trials.TrialError) as exc:
        messages.error(request, f"No trial started: {exc.field}: {exc}")
    else:
        messages.success(request, f"Runtime trial of {entry.display_name} started on "
                                  f"{data['machine_type']}.")
    return redirect("serving-model", pk=pk)
