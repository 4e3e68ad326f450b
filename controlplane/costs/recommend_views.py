"""The recommender page: model size, strategy and duration in, the cheapest configurations out,
each one click from the compose form (controlplane.costs.recommend_api does the work, for the API
too)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from controlplane.core import price_table
from controlplane.costs.recommend_api import run
from vertexplan import memory, recommend
from vertexplan.catalog.offerings import regions_with_offerings
from vertexplan.composer.fields import CHECKPOINTING_CHOICES

BILLION = 1_000_000_000
# The page's inputs passed to the API's serializer as they are.
PASSED = ("precision", "strategy", "region", "hours", "steps", "step_time_s", "reference_device",
          "reference_devices", "deadline_hours", "max_nodes", "hidden_size", "layers",
          "sequence_length")


def _data(query: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The serializer's input for the page's query string, and errors of its own fields."""
    data: dict[str, Any] = {k: query[k].strip() for k in PASSED if query.get(k, "").strip()}
    errors: dict[str, list[str]] = {}
    text = query.get("parameters_b", "").strip()
    try:
        billions = float(text)
        if not 0 < billions < 1e6:
            raise ValueError
        data["parameters"] = round(billions * BILLION)
    except ValueError:
        errors["parameters_b"] = [f"{text!r} is not valid: parameters in billions, e.g. 7"]
    schedules = [s for s in query.getlist("schedules") if s]
    if schedules:
        data["schedules"] = schedules
    mode = query.get("activation_checkpointing", "").strip()
    if mode:
        # "on": the page's checkbox before there were modes (every layer recomputed).
        data["activation_checkpointing"] = "full" if mode == "on" else mode
    return data, errors


def default_region(priced: tuple[str, ...]) -> str:
    """The region the page's menu starts on: the server's when the price table prices it,
    else the first priced one in the region catalogue's order (us-central1 first), not the
    alphabetically first (asia-east1), which a menu without a selection shows."""
    if settings.VERTEX_REGION in priced or not priced:
        return settings.VERTEX_REGION
    return next((r for r in regions_with_offerings() if r in priced), priced[0])


@login_required
@require_GET
def recommend_page(request: HttpRequest) -> HttpResponse:
    priced = price_table.current_table().regions
    context: dict[str, Any] = {
        "precisions": memory.DTYPES, "strategies": recommend.STRATEGY_CHOICES,
        "regions": priced, "region": request.GET.get("region") or default_region(priced),
        "devices": recommend.DEVICES, "checkpointing_choices": CHECKPOINTING_CHOICES,
        "schedules": recommend.SCHEDULES, "values": request.GET,
        "chosen_schedules": request.GET.getlist("schedules") or list(recommend.SCHEDULES),
    }
    status = 200
    if request.GET.get("parameters_b") is not None:
        data, errors = _data(request.GET)
        serializer, answer = run(data) if not errors else (None, None)
        if serializer is not None and answer is None:
            errors = {("parameters_b" if key == "parameters" else key): value
                      for key, value in serializer.errors.items()}
        context.update(errors=errors, answer=answer)
        status = 400 if errors else 200
    return render(request, "costs/recommend.html", context, status=status)
