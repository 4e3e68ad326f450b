"""Composer endpoints: validate without creating, export, import, presets and templates.

Every endpoint that takes a job takes it in either form the job list takes: the form's fields
as JSON, or a Vertex CustomJob in REST JSON. Errors are keyed by the path of the field sent.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.compose import recovery_fields, schemas, submission, validation
from controlplane.compose.estimates import estimate_of_checked
from controlplane.compose.export_notes import mark_not_carried
from controlplane.compose.models import JobTemplate, memory_policy_for
from controlplane.compose.quota_check import queue_of_checked, quota_of_checked
from controlplane.compose.serializers import JobRequestSerializer, TemplateSerializer, plain
from controlplane.compose.text_parsers import TextParser, XYamlParser, YamlParser
from controlplane.core import bounded
from controlplane.core.idempotency import idempotent
from controlplane.costs.budgets import BudgetExceeded
from controlplane.runs import access as runs_access
from controlplane.runs import api as runs_api
from controlplane.runs.filters import JOB_LIST_PARAMETERS
from controlplane.runs.serializers import JobListSerializer, JobSerializer
from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams.models import Team
from vertexplan import interop, presets

# Not "format": DRF reads ?format= to choose its own renderer.
FORMAT_PARAM = OpenApiParameter(
    "fmt", str, enum=list(interop.FORMATS),
    description="yaml (gcloud --config), json (REST), python, or wandb (a W&B Launch Vertex "
                "queue config; the fields it cannot carry are named in the X-Not-Exported "
                "header)")
CONTENT_TYPES = {"yaml": "application/yaml", "json": "application/json",
                 "python": "text/x-python", "wandb": "application/json"}
# The export answers in the format asked for: the schema names each media type.
# YAML and JSON are the CustomJob document itself; Python is a script.
EXPORT_RESPONSES = {(200, media): OpenApiTypes.STR if fmt == "python" else OpenApiTypes.OBJECT
                    for fmt, media in CONTENT_TYPES.items()}


def _team_or_none(user: Any, slug: str | None) -> Team | None:
    """The team to judge a dry run for; none (and no error) when the caller has several."""
    try:
        return runs_api.resolve_team(user, slug)
    except ValidationError:
        if slug:
            raise
        return None


def check_body(request: Request, *, require_team: bool, strict: bool = False,
               team_rules: bool = True) -> validation.CheckedRequest:
    """Validate the body in whichever form it came (a job request, or a CustomJob in REST
    JSON); serializer errors come back as errors, or with ``strict`` as a 400: a body that is
    not a job at all (not an object, a field the form does not have, a field of the wrong type)
    is refused as the schema says, and only a job Vertex would refuse is an answer."""
    data = request.data
    if not isinstance(data, dict) or not data:
        raise ValidationError({"non_field_errors": [
            "a job: a JSON object with the compose form's fields (name, chief, ...) or a Vertex "
            "CustomJob in its REST JSON (displayName, jobSpec)"]})
    if validation.is_custom_job(data):
        require_custom_job_shape(data)
        team = _team(request, request.query_params.get("team"), require_team)
        checked = validation.check_custom_job(data, team, region=request.query_params.get(
            "region"), memory_policy=memory_policy_for(team), team_rules=team_rules)
        return _without_team_error(checked, team, require_team)
    return check_request_body(request, data, require_team=require_team, strict=strict,
                              team_rules=team_rules)


def check_request_body(request: Request, data: dict[str, Any], *, require_team: bool,
                       strict: bool = False, team_rules: bool = True
                       ) -> validation.CheckedRequest:
    """Validate ``data``, a job request (the body, or the body with extra keys taken out):
    read once, then checked."""
    serializer = JobRequestSerializer(data=data)
    if not serializer.is_valid():
        if strict:
            raise ValidationError(serializer.errors)
        return validation.CheckedRequest(request=None, composition=None,
                                         errors=_flat(serializer.errors))
    body = plain(serializer.validated_data)
    team = _team(request, body.pop("team", None) or request.query_params.get("team"),
                 require_team)
    checked = validation.check(validation.read_request(body), team, team_rules=team_rules)
    return _without_team_error(checked, team, require_team)


def _team(request: Request, slug: str | None, require_team: bool) -> Team | None:
    if require_team:
        return runs_api.resolve_team(request.user, slug)
    return _team_or_none(request.user, slug)


def _without_team_error(checked: validation.CheckedRequest, team: Team | None,
                        require_team: bool) -> validation.CheckedRequest:
    """A dry run with no team chosen is judged without one: "choose a team" is no error."""
    if team is None and not require_team:
        checked.errors.pop("team", None)
    return checked


def require_custom_job_shape(data: dict[str, Any]) -> None:
    """A CustomJob's outline, as the schema states it (schemas.CustomJobSerializer): a 400
    before Vertex's rules read it, which expect these shapes."""
    errors: dict[str, list[str]] = {}
    # Either spelling: the SDK's snake_case dicts are read as the REST JSON they stand for.
    spec_key = "job_spec" if "job_spec" in data and "jobSpec" not in data else "jobSpec"
    name_key = ("display_name" if "display_name" in data and "displayName" not in data
                else "displayName")
    if not isinstance(data.get(spec_key), dict):
        errors[spec_key] = ["the CustomJobSpec, an object: {\"workerPoolSpecs\": [...]}"]
    if not isinstance(data.get(name_key), str):
        errors[name_key] = ["the job's name, a string"]
    labels = data.get("labels", {})
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        errors["labels"] = ["an object of strings"]
    if errors:
        raise ValidationError(errors)


def _flat(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested serializer errors as {"chief.accelerator_count": [...]}."""
    out: dict[str, list[str]] = {}
    if isinstance(errors, dict):
        for key, value in errors.items():
            name = key if key != "non_field_errors" else ""
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            for k, v in _flat(value, path).items():
                out.setdefault(k, []).extend(v)
    elif isinstance(errors, list):
        if all(isinstance(e, str) for e in errors):
            out[prefix] = [str(e) for e in errors]
        else:
            for i, value in enumerate(errors):
                for k, v in _flat(value, f"{prefix}[{i}]").items():
                    out.setdefault(k, []).extend(v)
    else:
        out[prefix] = [str(errors)]
    return out


def result(checked: validation.CheckedRequest) -> dict[str, Any]:
    composition = checked.composition
    plan = composition.memory_plan if composition else None
    return {
        "valid": checked.ok,
        "format": checked.format,
        "errors": checked.errors,
        "warnings": checked.warnings,
        "suggestions": {k: list(v) for k, v in checked.suggestions.items()},
        "memory_policy": checked.memory_policy,
        "memory_plan": plan.as_dict() if plan else None,
        "hints": composition.hints if composition else [],
        "world_size": composition.world_size if composition else None,
        "deepspeed_config": composition.deepspeed_config if composition else None,
        "request": checked.request.to_dict() if checked.request is not None else {},
        "custom_job": composition.custom_job if composition else None,
    }


class JobValidate(APIView):
    """Validate a job without creating anything: the field errors, the memory plan, the
    CustomJob it becomes. 200 for a job, ``valid`` saying whether it would be accepted and
    ``errors`` why not; 400 for a body that is not a job (not an object, an unknown field, a
    value of the wrong type)."""

    @extend_schema(request=schemas.JOB_BODY, responses={200: schemas.JobCheckSerializer})
    def post(self, request: Request) -> Response:
        checked = check_body(request, require_team=False, strict=True)
        # What it would cost, per hour and until its timeout (the budget's rule).
        return Response({**result(checked), "estimate": estimate_of_checked(checked),
                         "quota": quota_of_checked(checked), "queue": queue_of_checked(checked)})


def _export(custom_job: dict[str, Any], fmt: str | None, *, region: str, name: str,
            ) -> HttpResponse:
    fmt = fmt or "yaml"
    if fmt not in interop.FORMATS:
        raise ValidationError({"fmt": [f"unknown format {fmt!r}; valid: "
                                          f"{', '.join(interop.FORMATS)}"]})
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name) or "job"
    text = interop.export(custom_job, fmt, region=region, project=settings.VERTEX_PROJECT,
                          filename=f"{safe}.yaml")
    response = HttpResponse(text, content_type=f"{CONTENT_TYPES[fmt]}; charset=utf-8")
    mark_not_carried(response, custom_job, fmt)
    return response


class JobExport(APIView):
    """A job (either form) as gcloud YAML, REST JSON or a Python snippet; 400 if Vertex would
    refuse it. The team's policy is not applied: an export is a document, not a submission."""

    @extend_schema(request=schemas.JOB_BODY, parameters=[FORMAT_PARAM],
                   responses=EXPORT_RESPONSES)
    def post(self, request: Request) -> HttpResponse:
        checked = check_body(request, require_team=False, team_rules=False)
        if not checked.ok or checked.composition is None or checked.request is None:
            raise ValidationError(checked.errors)
        asked = checked.request
        custom_job = recovery_fields.with_labels(checked.composition.custom_job, asked.recovery)
        return _export(custom_job, request.query_params.get("fmt"), region=asked.region,
                       name=asked.name or "job")


class StoredJobExport(APIView):
    """A submitted job's CustomJob (as stored, before per-attempt names) in an export format."""

    @extend_schema(parameters=[FORMAT_PARAM], responses=EXPORT_RESPONSES)
    def get(self, request: Request, pk: int) -> HttpResponse:
        job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
        policy = (job.request or {}).get("recovery")
        return _export(recovery_fields.with_labels(job.custom_job, policy),
                       request.query_params.get("fmt"), region=job.region, name=job.name)


class JobImport(APIView):
    """A CustomJob, gcloud CustomJobSpec or W&B Launch Vertex queue config (YAML or JSON, as
    text or JSON) -> the job request it composes from, with the errors of the document keyed
    by its own field paths."""

    parser_classes = [bounded.BoundedJSONParser, TextParser, YamlParser, XYamlParser]

    @extend_schema(request=schemas.IMPORT_BODY, responses={200: schemas.ImportedSerializer})
    def post(self, request: Request) -> Response:
        data = request.data
        region = request.query_params.get("region") or settings.VERTEX_REGION
        # A gcloud --config file has no display name: ?name= (or ?filename=, its stem) gives it.
        name = request.query_params.get("name", "")
        filename = request.query_params.get("filename", "")
        try:
            if isinstance(data, dict) and isinstance(data.get("text"), str):
                imported = interop.import_text(data["text"], region=region, name=name,
                                               filename=filename)
            elif interop.wandb_launch.is_queue_config(data):
                # A W&B Launch Vertex queue config: {"vertex": {"spec": ..., "run": ...}}.
                imported = interop.import_text(json.dumps(data, ensure_ascii=False),
                                               region=region, name=name, filename=filename)
            elif isinstance(data, dict):
                if validation.is_custom_job(data):
                    # A CustomJob's outline; ?name= may stand in for its displayName.
                    require_custom_job_shape({"displayName": name, **data} if name else data)
                else:
                    pools = data.get("workerPoolSpecs", data.get("worker_pool_specs"))
                    if not isinstance(pools, list) or not all(
                            isinstance(pool, dict) for pool in pools):
                        raise ValidationError({"workerPoolSpecs": [
                            "a CustomJobSpec's pools: a list of objects (or send gcloud's "
                            "YAML as {\"text\": ...}, where one pool may be one mapping)"]})
                # Characters as they are: YAML reads the text first, and it would not join a
                # \u escaped surrogate pair back into one character.
                imported = interop.import_text(json.dumps(data, ensure_ascii=False),
                                               region=region, name=name,
                                               filename=filename)
            else:
                imported = interop.import_text(str(data), region=region, name=name,
                                               filename=filename)
        except interop.ImportFailed as exc:
            raise ValidationError({"": [str(exc)]}) from exc
        # The document's own errors (Vertex's rules, fields the composer cannot carry, the
        # strategy read from it), keyed by its paths; the team is chosen when submitting.
        checked = validation.check_custom_job(imported.custom_job, None, region=region)
        checked.errors.pop("team", None)
        # What the text asked for that is not in the CustomJob it reads as (a Python file's
        # unreadable run(...) argument): refused on its own name.
        for path, messages in imported.errors.items():
            known = checked.errors.setdefault(path, [])
            known.extend(m for m in messages if m not in known)
        return Response({"kind": imported.kind,
                         "request": recovery_fields.labels_into_request(imported.request),
                         "errors": checked.errors, "warnings": imported.warnings,
                         "valid": not checked.errors})


PRESET_SCHEMA = inline_serializer("Preset", {
    "slug": serializers.CharField(), "title": serializers.CharField(),
    "description": serializers.CharField(), "needs": serializers.CharField(),
    "notes": serializers.ListField(child=serializers.CharField()),
    "request": serializers.DictField(help_text="A body for POST /api/v1/jobs/."),
    "scaled_down": serializers.DictField(
        help_text="Its local variant, a body for POST /api/v1/jobs/ that the local emulator "
                  "can run: the same strategy, degrees and architecture at a CPU size."),
}, many=True)


class PresetList(APIView):
    """The job presets the composer ships."""

    @extend_schema(responses={200: PRESET_SCHEMA})
    def get(self, request: Request) -> Response:
        return Response([{"slug": p.slug, "title": p.title, "description": p.description,
                          "needs": p.needs, "notes": list(p.notes), "request": p.request,
                          "scaled_down": p.scaled_down()}
                         for p in presets.PRESETS])


@idempotent
class TemplateList(generics.ListCreateAPIView):
    """The templates of the caller's teams; POST saves one (team admins: name, description,
    request, and ?team= or "team" when you are in several teams)."""

    serializer_class = TemplateSerializer

    def get_queryset(self) -> QuerySet[JobTemplate]:
        return JobTemplate.objects.filter(
            team__in=access.teams_of(self.request.user)).select_related("team", "created_by")

    def perform_create(self, serializer: TemplateSerializer) -> None:
        slug = self.request.data.get("team") if isinstance(self.request.data, dict) else None
        team = runs_api.resolve_team(self.request.user,
                                     slug or self.request.query_params.get("team"))
        if not access.can_manage(self.request.user, team):
            raise PermissionDenied(f"only the admins of team {team.slug!r} save its templates")
        body = serializer.validated_data.get("request")
        if not isinstance(body, dict):
            raise ValidationError({"request": ["a job request (the form's fields) or a "
                                               "CustomJob in REST JSON"]})
        if validation.is_custom_job(body):
            imported = interop.to_request(body, region=settings.VERTEX_REGION)
            if imported.errors:
                raise ValidationError(imported.errors)
            body = recovery_fields.labels_into_request(imported.request)
        try:
            with transaction.atomic():  # a savepoint: the request's transaction goes on
                template = serializer.save(team=team, created_by=self.request.user,
                                           request=body)
        except IntegrityError as exc:
            raise ValidationError({"name": [f"team {team.slug} already has a template named "
                                            f"{serializer.validated_data['name']!r}"]}) from exc
        audit.record(self.request, "template.save", template)


class TemplateDetail(generics.RetrieveDestroyAPIView):
    serializer_class = TemplateSerializer

    def get_queryset(self) -> QuerySet[JobTemplate]:
        return JobTemplate.objects.filter(team__in=access.teams_of(self.request.user))

    def perform_destroy(self, instance: JobTemplate) -> None:
        if not access.can_manage(self.request.user, instance.team):
            raise PermissionDenied(f"only the admins of team {instance.team.slug!r} change its "
                                   "templates")
        audit.record(self.request, "template.delete", instance)
        instance.delete()


@extend_schema_view(get=extend_schema(parameters=JOB_LIST_PARAMETERS))
class JobListCreate(runs_api.JobList):
    """GET lists the caller's jobs (runs' view); POST creates one."""

    def get_serializer_class(self) -> type:
        return JobRequestSerializer if self.request.method == "POST" else JobListSerializer

    @extend_schema(request=schemas.JOB_BODY, responses={201: JobSerializer})
    @idempotent
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Create a job from the form's fields, or from a Vertex CustomJob in its REST JSON
        (?team=slug&region=... then name the team and region); errors of a CustomJob are keyed
        by the path of the bad field in it."""
        if not isinstance(request.data, dict):
            raise ValidationError({"non_field_errors": ["a job: a JSON object"]})
        if validation.is_custom_job(request.data):
            require_custom_job_shape(request.data)
            team = runs_api.resolve_team(request.user, request.query_params.get("team"))
            checked = validation.check_custom_job(
                request.data, team, region=request.query_params.get("region"),
                memory_policy=memory_policy_for(team))
            if not checked.ok:
                raise ValidationError(checked.errors)
        else:
            serializer = JobRequestSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            data = plain(serializer.validated_data)
            team = runs_api.resolve_team(request.user, data.pop("team", None))
            checked = validation.check(validation.read_request(data), team)
            if not checked.ok:
                raise ValidationError(validation.nested(checked.errors))
        try:
            job = submission.create_job(team=team, user=request.user, checked=checked)
        except BudgetExceeded as exc:
            # A Response, not a ValidationError: the figures stay integers.
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        audit.record(request, "job.submit", job)
        body = JobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)
