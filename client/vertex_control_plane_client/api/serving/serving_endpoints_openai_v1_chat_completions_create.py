from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.open_ai_chat_completion_request import OpenAIChatCompletionRequest
from ...models.open_ai_error import OpenAIError
from ...models.serving_endpoints_openai_v1_chat_completions_create_response_200 import (
    ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200,
)
from ...types import Response


def _get_kwargs(
    id: int,
    *,
    body: OpenAIChatCompletionRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/serving/endpoints/{id}/openai/v1/chat/completions".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200 | None:
    if response.status_code == 200:
        response_200 = ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = OpenAIError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = OpenAIError.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = OpenAIError.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = OpenAIError.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = OpenAIError.from_dict(response.json())

        return response_409

    if response.status_code == 429:
        response_429 = OpenAIError.from_dict(response.json())

        return response_429

    if response.status_code == 502:
        response_502 = OpenAIError.from_dict(response.json())

        return response_502

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
    body: OpenAIChatCompletionRequest,
) -> Response[OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200]:
    """Create a chat completion (OpenAI's API) through an endpoint

     OpenAI's chat completions, sent to the endpoint's model through Vertex's
    ChatCompletions; `stream: true` answers server-sent events as the model sends them.

    Args:
        id (int):
        body (OpenAIChatCompletionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    *,
    client: AuthenticatedClient,
    body: OpenAIChatCompletionRequest,
) -> OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200 | None:
    """Create a chat completion (OpenAI's API) through an endpoint

     OpenAI's chat completions, sent to the endpoint's model through Vertex's
    ChatCompletions; `stream: true` answers server-sent events as the model sends them.

    Args:
        id (int):
        body (OpenAIChatCompletionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
    body: OpenAIChatCompletionRequest,
) -> Response[OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200]:
    """Create a chat completion (OpenAI's API) through an endpoint

     OpenAI's chat completions, sent to the endpoint's model through Vertex's
    ChatCompletions; `stream: true` answers server-sent events as the model sends them.

    Args:
        id (int):
        body (OpenAIChatCompletionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient,
    body: OpenAIChatCompletionRequest,
) -> OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200 | None:
    """Create a chat completion (OpenAI's API) through an endpoint

     OpenAI's chat completions, sent to the endpoint's model through Vertex's
    ChatCompletions; `stream: true` answers server-sent events as the model sends them.

    Args:
        id (int):
        body (OpenAIChatCompletionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OpenAIError | ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
