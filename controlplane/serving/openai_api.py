"""OpenAI's API in front of an endpoint, under /api/v1/serving/endpoints/<id>/openai/v1/, so a
team's `openai` client talks to its deployed model through the control plane unchanged:

    client = openai.OpenAI(base_url=f"{site}/api/v1/serving/endpoints/{id}/openai/v1",
                           api_key=<an API token>)      # sent as Authorization: Bearer

    POST chat/completions   through Vertex's ChatCompletions (v1beta1), streamed or whole
    POST completions        through Vertex's Predict (openai_requests.py says why)
    GET  models             the models serving the endpoint's traffic

The checks are the predict route's (api.EndpointPredict): another team's endpoint is not found,
a viewer's role or a read-only token may not predict, the endpoint must be ready with a model
deployed and not private. Every refusal is OpenAI's error object; a request the model would
refuse is answered 400 naming the parameter and its limit before anything is sent on. A
stream is sent event by event as Vertex hands it over (under ASGI from an async iterator, which
Django does not buffer).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.backends import errors
from controlplane.backends.serving_base import get_serving_backend
from controlplane.security.auth import ApiTokenAuthentication, BearerTokenAuthentication
from controlplane.serving import access, predictions
from controlplane.serving.models import Deployment, Endpoint
from controlplane.serving.openai_requests import (
    DONE,
    OpenAIError,
    check_chat,
    check_completion,
    completion_events,
    completion_response,
    container_refusal,
    error_body,
    event,
)

# As long as the model server gives a generation (trainers/serving/http.py REQUEST_TIMEOUT_S).
GENERATION_TIMEOUT_S = 120.0

ERROR = inline_serializer("OpenAIError", {"error": inline_serializer("OpenAIErrorObject", {
    "message": serializers.CharField(),
    "type": serializers.CharField(),
    "param": serializers.CharField(allow_null=True),
    "code": serializers.CharField(allow_null=True),
})})


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ERROR, description=description)


REFUSALS = {
    400: _error("Refused before anything was sent on: `param` names the field, the message "
                "its limit (a prompt over the context a request may hold, max_tokens over "
                "the limit), or the model server's own refusal."),
    401: _error("No API token (`Authorization: Bearer <token>`), or one that is not valid."),
    403: _error("The caller's role or token may not send predictions to this endpoint."),
    404: _error("No endpoint of that id that the caller can see."),
    409: _error("The endpoint is not ready, has no model deployed, or is private (reachable "
                "only from its allowlisted VPCs); for chat, its model is served by Triton."),
    429: _error("Too many requests; retry after Retry-After seconds."),
    502: _error("Vertex's prediction service, or the model server behind it, failed."),
}
# Where the schema leaves a body open: OpenAI's own reference documents it.
CHAT_REQUEST = inline_serializer("OpenAIChatCompletion", {
    "model": serializers.CharField(required=False),
    "messages": serializers.ListField(child=serializers.DictField()),
    "max_tokens": serializers.IntegerField(required=False, min_value=1, max_value=512),
    "temperature": serializers.FloatField(required=False, min_value=0, max_value=10),
    "top_p": serializers.FloatField(required=False, max_value=1),
    "seed": serializers.IntegerField(required=False),
    "stop": serializers.JSONField(required=False),
    "stream": serializers.BooleanField(required=False),
})
COMPLETION_REQUEST = inline_serializer("OpenAICompletion", {
    "model": serializers.CharField(required=False),
    "prompt": serializers.JSONField(help_text="A string, or a list of strings."),
    "max_tokens": serializers.IntegerField(required=False, min_value=1, max_value=512),
    "temperature": serializers.FloatField(required=False, min_value=0, max_value=10),
    "top_p": serializers.FloatField(required=False, max_value=1),
    "seed": serializers.IntegerField(required=False),
    "stop": serializers.JSONField(required=False),
    "stream": serializers.BooleanField(required=False),
})
_ANSWERED = ("OpenAI's answer: its JSON object, or with `stream: true` its chunks as "
             "server-sent events (text/event-stream), then `data: [DONE]`.")
ANSWER = {(200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description=_ANSWERED),
          (200, "text/event-stream"): OpenApiResponse(OpenApiTypes.STR, description=_ANSWERED)}


class OpenAIView(APIView):
    """The API token as OpenAI's clients send it (Bearer) or as the rest of the API takes it;
    every refusal in OpenAI's error shape."""

    authentication_classes = [BearerTokenAuthentication, ApiTokenAuthentication,
                              SessionAuthentication]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, OpenAIError):
            return Response(exc.body(), status=exc.status)
        response = super().handle_exception(exc)
        param = None
        detail = response.data
        if isinstance(exc, exceptions.ValidationError) and isinstance(detail, dict):
            param, problems = next(iter(detail.items()), (None, ""))
            detail = f"{param}: {problems[0] if isinstance(problems, list) else problems}"
        elif isinstance(detail, dict):
            detail = detail.get("detail", detail)
        response.data = error_body(str(detail), response.status_code, param)
        return response

    def endpoint(self, request: Request, pk: int, send: bool = True) -> Endpoint:
        """The caller's endpoint (else 404); with `send`, one it may send predictions to now,
        as the predict route checks it."""
        endpoint = access.visible_endpoints(request.user).filter(pk=pk).first()
        if endpoint is None:
            raise OpenAIError(f"no endpoint {pk} of your teams", status=404)
        if not send:
            return endpoint
        if not access.can_change(request.user, endpoint.team):
            raise OpenAIError("your role in this team (or your token) cannot send "
                              "predictions", status=403)
        if endpoint.state != Endpoint.State.READY:
            raise OpenAIError(f"the endpoint is {endpoint.state}", status=409)
        if not endpoint.deployments.filter(state=Deployment.State.DEPLOYED).exists():
            raise OpenAIError("no model is deployed to this endpoint: deploy one first",
                              status=409)
        if endpoint.access == Endpoint.Access.PRIVATE:
            raise OpenAIError(
                "a private endpoint answers only inside the VPCs of its allowlisted projects, "
                "through a Private Service Connect endpoint on its service attachment "
                f"({endpoint.service_attachment or 'not known yet'})", status=409)
        return endpoint


class ChatCompletions(OpenAIView):
    @extend_schema(summary="Create a chat completion (OpenAI's API) through an endpoint",
                   request=CHAT_REQUEST, responses={**ANSWER, **REFUSALS})
    def post(self, request: Request, pk: int) -> HttpResponse:
        """OpenAI's chat completions, sent to the endpoint's model through Vertex's
        ChatCompletions; `stream: true` answers server-sent events as the model sends them."""
        endpoint = self.endpoint(request, pk)
        body = request.data
        stream = check_chat(body)
        try:
            triton = predictions.serves_triton(endpoint)
        except predictions.MixedRuntimes as exc:
            raise OpenAIError(str(exc), status=status.HTTP_409_CONFLICT) from exc
        if triton:
            # Triton's generation model takes the contract's instances (and a tensorrt
            # engine logits), not chat messages: reached through completions.
            raise OpenAIError("this endpoint serves Triton, which has no chat completions: "
                              "use completions, or deploy an eager, compiled or aot model",
                              status=status.HTTP_409_CONFLICT)
        try:
            chunks = get_serving_backend().chat_completions(
                endpoint.vertex_name, json.dumps(body).encode(),
                timeout_s=GENERATION_TIMEOUT_S, dedicated_dns=endpoint.dedicated_dns)
            if not stream:
                return HttpResponse(b"".join(chunks), content_type="application/json")
        except errors.InvalidJobSpec as exc:
            raise container_refusal(str(exc)) from exc
        except errors.BackendError as exc:
            raise OpenAIError(str(exc), status=status.HTTP_502_BAD_GATEWAY) from exc
        return _event_stream(request, _failures_as_events(chunks),
                             getattr(chunks, "close", None))


class Completions(OpenAIView):
    @extend_schema(summary="Create a completion (OpenAI's API) through an endpoint",
                   request=COMPLETION_REQUEST, responses={**ANSWER, **REFUSALS})
    def post(self, request: Request, pk: int) -> HttpResponse:
        """OpenAI's completions, answered from Vertex's Predict with the instances the predict
        route sends (the same greedy text); a stream carries the whole answer, which Predict
        gives at once."""
        endpoint = self.endpoint(request, pk)
        completion = check_completion(request.data)
        try:
            result = predictions.predict(endpoint, completion.instances,
                                         timeout_s=GENERATION_TIMEOUT_S)
        except predictions.BadInstance as exc:
            raise OpenAIError(str(exc), "prompt") from exc
        except predictions.MixedRuntimes as exc:
            raise OpenAIError(str(exc), status=status.HTTP_409_CONFLICT) from exc
        except errors.InvalidJobSpec as exc:
            raise container_refusal(str(exc)) from exc
        except errors.BackendError as exc:
            raise OpenAIError(str(exc), status=status.HTTP_502_BAD_GATEWAY) from exc
        model = str(request.data.get("model") or endpoint.name)
        if completion.stream:
            return _event_stream(request, iter(completion_events(completion, model,
                                                                 result.predictions)))
        return HttpResponse(json.dumps(completion_response(completion, model,
                                                           result.predictions)),
                            content_type="application/json")


class Models(OpenAIView):
    @extend_schema(summary="List the models serving an endpoint (OpenAI's API)",
                   responses={200: inline_serializer("OpenAIModelList", {
                       "object": serializers.CharField(),
                       "data": serializers.ListField(child=serializers.DictField())}),
                       **{code: REFUSALS[code] for code in (401, 403, 404, 429)}})
    def get(self, request: Request, pk: int) -> Response:
        """The models taking the endpoint's traffic, as OpenAI lists models."""
        endpoint = self.endpoint(request, pk, send=False)
        deployed = (endpoint.deployments.filter(state=Deployment.State.DEPLOYED)
                    .select_related("model_entry").order_by("id"))
        return Response({"object": "list", "data": [
            {"id": d.model_entry.display_name, "object": "model",
             "created": int(d.created_at.timestamp()), "owned_by": endpoint.team.slug}
            for d in deployed]})


class UnknownEndpoint(OpenAIView):
    """OpenAI's paths under an id that is no endpoint's (not a number): OpenAI's 404, where
    Django would answer its own page, or, for a POST without a trailing slash, fail to
    redirect it. Out of the schema: the documented paths take an integer id."""

    @extend_schema(exclude=True)
    def get(self, request: Request, pk: str, route: str = "") -> Response:
        raise OpenAIError(f"no endpoint {pk[:40]!r} of your teams", status=404)

    @extend_schema(exclude=True)
    def post(self, request: Request, pk: str, route: str = "") -> Response:
        raise OpenAIError(f"no endpoint {pk[:40]!r} of your teams", status=404)


def _failures_as_events(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The stream's chunks; a failure midway (the headers are sent) as an error event, then
    [DONE], as OpenAI ends a stream it cannot finish."""
    try:
        yield from chunks
    except errors.BackendError as exc:
        yield event(error_body(str(exc), status.HTTP_502_BAD_GATEWAY))
        yield DONE


def _event_stream(request: Request, chunks: Iterator[bytes],
                  cancel: Callable[[], None] | None = None) -> StreamingHttpResponse:
    """`cancel` ends the call behind `chunks` when the client goes away."""
    # Under ASGI Django reads a sync iterator whole before sending it: hand it an async one.
    content = (_async(chunks, cancel) if isinstance(request._request, ASGIRequest)
               else chunks)
    response = StreamingHttpResponse(content, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a buffering proxy would hold the events back
    return response


async def _async(chunks: Iterator[bytes],
                 cancel: Callable[[], None] | None) -> AsyncIterator[bytes]:
    """Each chunk as it comes, read in a worker thread. When the client goes away, `cancel`
    (thread-safe) ends the call, which ends a read still waiting in its thread."""
    read = sync_to_async(next, thread_sensitive=False)
    finished = False
    try:
        while (chunk := await read(chunks, None)) is not None:
            yield chunk
        finished = True
    finally:
        if not finished and cancel is not None:
            cancel()
