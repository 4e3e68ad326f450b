"""The sweep form's pages: compose a sweep (its trial job in the compose form, the study
beside it), see it checked and priced, and submit it through the same path as the API
(controlplane.sweeps.submission), once per page."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views import View

from controlplane.compose import sweep_request
from controlplane.compose.forms import initial_from_request
from controlplane.compose.sweep_estimates import sweep_estimate
from controlplane.compose.sweep_forms import (
    ROWS_SHOWN,
    StudyForm,
    TrialJobForm,
    parameter_formset,
)
from controlplane.compose.views import SubmitterRequiredMixin, error_summary
from controlplane.core import idempotency
from controlplane.security import audit
from controlplane.sweeps import lifecycle, submission
from controlplane.sweeps.access import visible_sweeps
from controlplane.teams import access
from vertexplan.digits import ascii_int

TEMPLATE = "compose/sweep_compose.html"


@dataclass
class Bound:
    """The page's three forms bound to one POST, read and checked."""

    study: StudyForm
    rows: Any
    trial: TrialJobForm
    built: sweep_request.Built | None = None
    checked: lifecycle.Checked | None = None
    estimate: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.checked is not None and self.checked.ok and not self.errors

    @property
    def errors(self) -> int:
        rows = sum(len(e) for row in self.rows.forms for e in row.errors.values())
        return (sum(len(e) for e in self.study.errors.values()) + rows +
                sum(len(e) for e in self.trial.errors.values()) +
                len(self.built.table_errors if self.built else []) +
                len(self.rows.non_form_errors()))


def bind(request: HttpRequest) -> Bound:
    """Read the forms; when every input reads, build the sweep request and check it as the
    API does, its messages put on the fields they name, and price it."""
    bound = Bound(StudyForm(request.POST), parameter_formset(request.POST),
                  TrialJobForm(request.POST, user=request.user))
    # Every form is read (so every input's problem shows at once); the trial job reads
    # even without a team, which the sweep's check then names.
    parsed = [bound.study.is_valid(), bound.rows.is_valid(), bound.trial.is_valid()]
    trial_request = bound.trial.trial_request
    if not all(parsed[:2]) or trial_request is None:
        return bound
    bound.built = sweep_request.build(bound.study, bound.rows, trial_request)
    if any(row.errors for row in bound.rows.forms):
        return bound
    team = bound.trial.cleaned_data.get("team")
    bound.checked = lifecycle.check(bound.built.request, team)
    sweep_request.attach(bound.checked.errors, bound.built, bound.study, bound.trial)
    bound.estimate = sweep_estimate(bound.checked, team)
    return bound


class SweepComposeView(SubmitterRequiredMixin, View):
    """The sweep form; ?from=<sweep> fills it in from a sweep's request (clone)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        study_initial: dict[str, Any] = {}
        rows_initial = None
        trial_initial: dict[str, Any] = {}
        clone_of = None
        source = ascii_int(request.GET.get("from", ""))
        if source is not None:
            clone_of = visible_sweeps(request.user).filter(pk=source).first()
        if clone_of is not None:
            study_initial, rows_initial = sweep_request.initial_from_request(clone_of.request)
            team = clone_of.team.slug if access.can_submit(request.user, clone_of.team) else ""
            trial = clone_of.request.get("trial_job")
            trial_initial = initial_from_request(trial if isinstance(trial, dict) else {}, team)
        wanted = request.GET.get("rows", "")
        rows = ascii_int(wanted, max_digits=2) or 0
        return _render(request, StudyForm(initial=study_initial),
                       parameter_formset(initial=rows_initial, rows=rows or ROWS_SHOWN),
                       TrialJobForm(initial=trial_initial, user=request.user),
                       clone_of=clone_of)

    def post(self, request: HttpRequest) -> HttpResponse:
        bound = bind(request)
        if request.POST.get("action") != "submit" or not bound.ok:
            return _render(request, bound.study, bound.rows, bound.trial, bound=bound,
                           refused=request.POST.get("action") == "submit",
                           status=400 if bound.errors else 200)
        return _submit_once(request, bound)


def _submit_once(request: HttpRequest, bound: Bound) -> HttpResponse:
    assert bound.built is not None and bound.checked is not None
    body, team = bound.built.request, bound.trial.cleaned_data["team"]
    key = bound.study.cleaned_data["idempotency_key"]
    fingerprint = _fingerprint(team.slug, body)
    with transaction.atomic():
        try:
            earlier = idempotency.claim(request.user, key, fingerprint, request)
        except idempotency.KeyConflict:
            bound.study.add_error(None, "this page already submitted another sweep; reload "
                                        "it to submit a new one")
            return _render(request, bound.study, bound.rows, bound.trial, bound=bound,
                           refused=True, status=400)
        if earlier is not None:
            # A second click, or the browser resending: the first one's sweep.
            made = (earlier.response_body or {}).get("sweep")
            return redirect("sweep-detail", pk=made) if made else redirect("sweep-list")
        try:
            sweep = submission.create_sweep(team=team, user=request.user, request=body,
                                            checked=bound.checked)
        except submission.SweepRefused as exc:
            transaction.set_rollback(True)  # the key stays free for the corrected form
            refusal: submission.SweepRefused | None = exc
        else:
            refusal = None
            idempotency.store(request.user, key, 201, {"sweep": sweep.pk})
    if refusal is not None:  # the team's budget, or a change since the check
        sweep_request.attach(refusal.errors, bound.built, bound.study, bound.trial)
        return _render(request, bound.study, bound.rows, bound.trial, bound=bound,
                       refused=True, status=400)
    audit.record(request, "sweep.submit", sweep)
    messages.success(request, f"Sweep {sweep.name} (#{sweep.pk}) queued for submission.")
    return redirect("sweep-detail", pk=sweep.pk)


def _fingerprint(team: str, body: dict[str, Any]) -> str:
    """What makes two submissions of the page the same: the team and the request."""
    canonical = json.dumps([team, body], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class SweepValidateView(SubmitterRequiredMixin, View):
    """The side panel, refreshed as the form changes: the sweep's errors and its price."""

    def post(self, request: HttpRequest) -> HttpResponse:
        bound = bind(request)
        return render(request, "compose/partials/sweep_validation.html",
                      _panel(bound) | {"study": bound.study, "rows": bound.rows,
                                       "form": bound.trial})


def _panel(bound: Bound | None) -> dict[str, Any]:
    if bound is None:
        return {"bound": None}
    return {"bound": bound, "estimate": bound.estimate,
            "table_errors": bound.built.table_errors if bound.built else [],
            "warnings": bound.checked.composition.warnings if bound.checked else {},
            "tuning_job": bound.checked.composition.tuning_job
            if bound.checked and bound.checked.ok else None}


def summary(study: StudyForm, rows: Any, trial: TrialJobForm,
            bound: Bound | None) -> list[dict[str, str]]:
    """Every error of the page, in its order, each with its field's label and element id."""
    out = [{**e, "label": "Sweep" if e["label"] == "Job" else e["label"]}
           for e in error_summary(study)]
    table = [*rows.non_form_errors(), *(bound.built.table_errors if bound and bound.built
                                        else [])]
    out += [{"label": "Parameters", "message": str(e), "anchor": "errors-parameters"}
            for e in table]
    for number, row in enumerate(rows.forms, start=1):
        out += [{"label": f"Parameter {number}", "message": str(e),
                 "anchor": f"errors-parameter-{number - 1}"} for e in row.non_field_errors()]
        out += [{"label": f"Parameter {number}, {str(f.label).lower()}", "message": str(e),
                 "anchor": f.id_for_label} for f in row for e in f.errors]
    return out + [{**e, "label": f"Trial job: {e['label']}"} for e in error_summary(trial)]


def _render(request: HttpRequest, study: StudyForm, rows: Any, trial: TrialJobForm, *,
            bound: Bound | None = None, refused: bool = False, status: int = 200,
            **context: Any) -> HttpResponse:
    return render(request, TEMPLATE, {
        "study": study, "rows": rows, "form": trial,
        "error_summary": summary(study, rows, trial, bound) if refused else [],
        "more_rows": min(len(rows.forms) + 3, 24), **_panel(bound), **context,
    }, status=status)
