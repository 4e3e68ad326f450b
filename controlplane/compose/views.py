"""Pages of the composer: compose, validate, export and import a job, team templates, and
resubmitting a job from one of its checkpoints."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View
from django.views.decorators.http import require_GET, require_POST

from controlplane.compose import recovery_fields, regions, submission
from controlplane.compose.estimates import estimate_of_checked, hours_or_none
from controlplane.compose.export_notes import mark_not_carried
from controlplane.compose.forms import JobForm, initial_from_request
from controlplane.compose.models import JobTemplate
from controlplane.compose.quota_check import queue_of_checked, quota_of_checked
from controlplane.core import bounded
from controlplane.costs.budgets import BudgetExceeded
from controlplane.runs import access as runs_access
from controlplane.runs.views import int_or_404
from controlplane.security import audit
from controlplane.teams import access
from vertexplan import interop, presets
from vertexplan.catalog.hardware_regions import regions_offering_all
from vertexplan.digits import ascii_int

_EXTENSIONS = {"yaml": ("yaml", "application/yaml"), "json": ("json", "application/json"),
               "python": ("py", "text/x-python"),
               "wandb": ("wandb-launch.json", "application/json")}


class SubmitterRequiredMixin(LoginRequiredMixin):
    """Viewers may look but not compose: 403 for a user with no team to submit to."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated and not access.submit_teams(request.user).exists():
            raise PermissionDenied("your role in your teams cannot submit jobs")
        return super().dispatch(request, *args, **kwargs)


class JobComposeView(SubmitterRequiredMixin, View):
    """The compose form; ?clone=<job>, ?template=<id>, ?preset=<slug> or ?recommended=<a job
    request as JSON> fill it in."""

    template_name = "compose/job_compose.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        initial: dict[str, Any] = {}
        context: dict[str, Any] = {}
        teams = access.submit_teams(request.user)
        only_team = teams[0].slug if teams.count() == 1 else ""
        if request.GET.get("clone"):
            clone_of = get_object_or_404(runs_access.submitted_jobs(request.user),
                                         pk=int_or_404(request.GET["clone"]))
            team = clone_of.team.slug if access.can_submit(request.user, clone_of.team) else ""
            initial = initial_from_request(clone_of.request, team)
            context["clone_of"] = clone_of
        elif request.GET.get("template"):
            template = get_object_or_404(
                JobTemplate.objects.filter(team__in=access.teams_of(request.user)),
                pk=int_or_404(request.GET["template"]))
            team = template.team.slug if access.can_submit(request.user, template.team) else ""
            initial = initial_from_request(template.request, team)
            context["template"] = template
        elif request.GET.get("preset"):
            preset = presets.get(request.GET["preset"])
            if preset is None:
                raise Http404("no such preset")
            # ?scale=down: its local variant, which the local emulator's machine holds.
            scaled = request.GET.get("scale") == "down" and preset.scaled is not None
            initial = initial_from_request(
                preset.scaled_down() if scaled else preset.job_request(), only_team)
            context["preset"] = preset
            context["scaled_down"] = scaled
        elif request.GET.get("recommended"):
            # A recommender result's job request (vertexplan.recommend): shown, never stored.
            recommended = _json_object_or_400(request.GET["recommended"])
            initial = initial_from_request(recommended, only_team)
            context["recommended"] = True
        form = JobForm(initial=initial, user=request.user)
        context["warnings"] = form.warnings
        return self._render(request, form, **context)

    def post(self, request: HttpRequest) -> HttpResponse:
        form = JobForm(request.POST, user=request.user)
        if not form.is_valid() or form.checked is None:
            return refused(request, form, "Submit")
        checked = form.checked
        try:
            job = submission.create_job(team=form.cleaned_data["team"], user=request.user,
                                       checked=checked)
        except BudgetExceeded as exc:
            form.add_error(None, str(exc))
            return refused(request, form, "Submit")
        audit.record(request, "job.submit", job)
        messages.success(request, f"Job {job.name} (#{job.pk}) queued for submission.")
        return redirect("job-detail", pk=job.pk)

    def _render(self, request: HttpRequest, form: JobForm, *, status: int = 200,
                **context: Any) -> HttpResponse:
        return render(request, self.template_name, {"form": form, **_compose_context(request),
                                                    **context}, status=status)


def refused(request: HttpRequest, form: JobForm, action: str) -> HttpResponse:
    """The compose page after a refused Submit or Export: a summary of every error at the top
    (linking to its field), the side panel as Validate left it, the status beside Submit."""
    form.is_valid()
    estimate = None
    if form.checked is not None:
        estimate = estimate_of_checked(form.checked,
                                       hours_or_none(request.POST.get("estimate_hours")))
    return render(request, "compose/job_compose.html", {
        "form": form, **_compose_context(request), "refused": action,
        "checked": form.checked, "estimate": estimate,
        "status": panel_status(form, form.checked, estimate),
        "error_summary": error_summary(form),
    }, status=400)


def error_summary(form: JobForm) -> list[dict[str, str]]:
    """Every error of the form, in the form's order, with its field's label and element id."""
    out = [{"label": "Job", "message": str(e), "anchor": "non-field-errors"}
           for e in form.non_field_errors()]
    for field in form:
        out += [{"label": str(field.label), "message": str(e),
                 "anchor": field.id_for_label or f"errors-{field.name}"} for e in field.errors]
    return out


def panel_status(form: JobForm, checked: Any, estimate: dict[str, Any] | None
                 ) -> dict[str, Any]:
    """What the line beside Submit says: how many errors, whether the model fits, the cost."""
    errors = sum(len(e) for e in form.errors.values())
    fits = None
    composition = getattr(checked, "composition", None)
    plan = getattr(composition, "memory_plan", None) if composition else None
    if plan is not None and getattr(plan, "device_memory_gib", None):
        fits = bool(plan.fits)
    cost = None
    if estimate and not estimate.get("error"):
        cost = (estimate.get("total") or {}).get(estimate.get("rate") or "on_demand")
    return {"errors": errors, "fits": fits, "cost_micros": cost,
            "rate": (estimate or {}).get("rate") or ""}


def _json_object_or_400(text: str) -> dict[str, Any]:
    try:
        value = bounded.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise BadRequest("recommended must be a job request as a JSON object")
    return value


def _compose_context(request: HttpRequest) -> dict[str, Any]:
    return {
        "presets": presets.PRESETS,
        "templates": JobTemplate.objects.filter(
            team__in=access.teams_of(request.user)).select_related("team"),
        "export_formats": interop.FORMATS,
        "manages_a_team": access.managed_teams(request.user).exists(),
    }


@login_required
@require_GET
def job_regions(request: HttpRequest) -> JsonResponse:
    """The compose form's region menu for the hardware in the query: machine_type and
    accelerator_type, repeated for each pool (the chief first). compose.js refreshes the menu
    with it as the hardware changes; the form checks the region again when it is posted."""
    hardware = zip_longest(request.GET.getlist("machine_type")[:8],
                           request.GET.getlist("accelerator_type")[:8], fillvalue="")
    offered = regions_offering_all(regions.offerings_of(hardware))
    return JsonResponse({
        "regions": [{"name": name, "label": label} for name, label in regions.choices(offered)],
        "default": regions.default_region(offered),
    })


class JobValidateView(SubmitterRequiredMixin, View):
    """A dry run of the compose form: errors, memory plan, world size and CustomJob; creates
    nothing."""

    def post(self, request: HttpRequest) -> HttpResponse:
        form = JobForm(request.POST, user=request.user)
        form.is_valid()
        estimate = quota = queue = None
        if form.checked is not None:
            estimate = estimate_of_checked(
                form.checked, hours_or_none(request.POST.get("estimate_hours")))
            quota = quota_of_checked(form.checked)
            queue = queue_of_checked(form.checked)
        return render(request, "compose/partials/validation.html",
                      {"form": form, "checked": form.checked, "estimate": estimate,
                       "quota": quota, "queue": queue, "export_formats": interop.FORMATS,
                       "status": panel_status(form, form.checked, estimate)})


class JobExportView(SubmitterRequiredMixin, View):
    """The compose form's job as gcloud YAML, REST JSON or a Python snippet (?format=)."""

    def post(self, request: HttpRequest) -> HttpResponse:
        fmt = request.GET.get("format") or request.POST.get("export_format") or "yaml"
        if fmt not in interop.FORMATS:
            raise Http404("no such export format")
        # An export is a document for running the job elsewhere: judged as Vertex would judge
        # it, not by this team's policy (a job naming its own bucket or service account).
        form = JobForm(request.POST, user=request.user, team_rules=False)
        valid = form.is_valid()
        checked = form.checked
        if not valid or checked is None or checked.composition is None:
            # Only a job Vertex would run is written.
            return refused(request, form, f"Export {fmt}")
        asked = checked.composition.request
        custom_job = recovery_fields.with_labels(checked.composition.custom_job, asked.recovery)
        return _export_response(custom_job, fmt, region=asked.region, name=asked.name or "job")


@login_required
@require_GET
def job_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """A submitted job's CustomJob (without the per-attempt name and labels) as a file."""
    job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
    if fmt not in interop.FORMATS:
        raise Http404("no such export format")
    policy = (job.request or {}).get("recovery")
    return _export_response(recovery_fields.with_labels(job.custom_job, policy), fmt,
                            region=job.region, name=job.name)


def _export_response(custom_job: dict[str, Any], fmt: str, *, region: str,
                     name: str) -> HttpResponse:
    ext, content_type = _EXTENSIONS[fmt]
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name) or "job"
    text = interop.export(custom_job, fmt, region=region or settings.VERTEX_REGION,
                          project=settings.VERTEX_PROJECT, filename=f"{safe}.yaml")
    response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{safe}.{ext}"'
    mark_not_carried(response, custom_job, fmt)
    return response


class JobImportView(SubmitterRequiredMixin, View):
    """Paste or upload a CustomJob (YAML or JSON) or gcloud's --config file: it opens in the
    compose form."""

    template_name = "compose/job_import.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, self.template_name, {})

    def post(self, request: HttpRequest) -> HttpResponse:
        upload = request.FILES.get("file")
        text = upload.read().decode("utf-8", "replace") if upload else request.POST.get(
            "text", "")
        try:
            imported = interop.import_text(text, region=settings.VERTEX_REGION,
                                           name=request.POST.get("name", ""),
                                           filename=upload.name if upload else "")
        except interop.ImportFailed as exc:
            return render(request, self.template_name, {"error": str(exc), "text": text},
                          status=400)
        teams = access.submit_teams(request.user)
        initial = initial_from_request(imported.request,
                                       teams[0].slug if teams.count() == 1 else "")
        form = JobForm(initial=initial, user=request.user)
        errors = [f"{path}: {message}" for path, messages in imported.errors.items()
                  for message in messages]
        context = {"form": form, **_compose_context(request), "imported": imported,
                   "warnings": [*imported.warnings, *form.warnings, *errors]}
        return render(request, "compose/job_compose.html", context)


class TemplateListView(LoginRequiredMixin, View):
    """The shipped presets and the templates of the user's teams."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "compose/templates.html", {
            "presets": presets.PRESETS,
            "templates": JobTemplate.objects.filter(
                team__in=access.teams_of(request.user)).select_related("team", "created_by"),
            "can_edit": {t.pk for t in access.managed_teams(request.user)},
        })


class TemplateSaveView(SubmitterRequiredMixin, View):
    """Save the compose form's job as a team template (the form must parse, not validate:
    a template may be a starting point that still needs an image or a name)."""

    def post(self, request: HttpRequest) -> HttpResponse:
        form = JobForm(request.POST, user=request.user)
        name = (request.POST.get("template_name") or "").strip()
        form.is_valid()
        team = form.cleaned_data.get("team") if hasattr(form, "cleaned_data") else None
        problems = [f"{field}: {' '.join(errs)}" for field, errs in form.errors.items()
                    if field != "__all__" and field in form.fields
                    and not _composer_error(form, field)]
        if team is None:
            problems.insert(0, "choose the team the template belongs to")
        elif not access.can_manage(request.user, team):
            return render(request, "compose/partials/template_saved.html",
                          {"problems": [f"only the admins of team {team.slug} save its "
                                        "templates"]}, status=403)
        if not name:
            problems.insert(0, "give the template a name")
        if problems:
            return render(request, "compose/partials/template_saved.html",
                          {"problems": problems}, status=400)
        template, created = JobTemplate.objects.update_or_create(
            team=team, name=name[:100],
            defaults={"request": form.to_request(), "created_by": request.user,
                      "description": (request.POST.get("template_description") or "")[:2000]})
        audit.record(request, "template.save", template)
        return render(request, "compose/partials/template_saved.html",
                      {"template": template, "created": created})


def _composer_error(form: JobForm, field: str) -> bool:
    """Whether a field's errors came from validating the job (not from parsing the input)."""
    checked = form.checked
    return checked is not None and any(form.field_for(key) == field for key in checked.errors)


@login_required
@require_POST
def template_delete(request: HttpRequest, pk: int) -> HttpResponse:
    template = get_object_or_404(JobTemplate.objects.filter(
        team__in=access.teams_of(request.user)), pk=pk)
    if not access.can_manage(request.user, template.team):
        raise PermissionDenied(f"only the admins of team {template.team.slug} change its "
                               "templates")
    audit.record(request, "template.delete", template)
    template.delete()
    messages.success(request, f"Template {template.name} deleted.")
    return redirect("template-list")


@login_required
@require_POST
def job_resubmit(request: HttpRequest, pk: int) -> HttpResponse:
    """A new job from one of this job's checkpoints (POST checkpoint_step; newest if blank)."""
    job = get_object_or_404(runs_access.submitted_jobs(request.user), pk=pk)
    if not access.can_submit(request.user, job.team):
        raise PermissionDenied("your role in this team cannot resubmit jobs")
    raw = request.POST.get("checkpoint_step", "").strip()
    step = ascii_int(raw)
    if raw and step is None:
        messages.error(request, f"checkpoint_step {raw[:40]!r} is not a step: a whole number "
                                "(ASCII digits), or blank for the newest checkpoint")
        return redirect("job-detail", pk=job.pk)
    try:
        new_job = submission.resubmit(job, user=request.user, checkpoint_step=step)
    except submission.ResubmitError as exc:
        messages.error(request, "; ".join(m for ms in exc.errors.values() for m in ms))
        return redirect("job-detail", pk=job.pk)
    audit.record(request, "job.resubmit", new_job,
                 detail={"from_job": job.pk, "step": new_job.resume_from_step})
    messages.success(request, f"Resubmitted as {new_job.name} (#{new_job.pk}), starting from "
                              f"the checkpoint of step {new_job.resume_from_step}.")
    return redirect("job-detail", pk=new_job.pk)
