from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.open_ai_error import OpenAIError
from ...models.open_ai_model_list import OpenAIModelList
from ...types import Response


def _get_kwargs(
    id: int,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/serving/endpoints/{id}/openai/v1/models".format(
            id=quote(str(id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> OpenAIError | OpenAIModelList | None:
    if response.status_code == 200:
        response_200 = OpenAIModelList.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = OpenAIError.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = OpenAIError.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = OpenAIError.from_dict(response.json())

        return response_404

    if response.status_code == 429:
        response_429 = OpenAIError.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[OpenAIError | OpenAIModelList]:
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
) -> Response[OpenAIError | OpenAIModelList]:
    """List the models serving an endpoint (OpenAI's API)

     The models taking the endpoint's traffic, as OpenAI lists models.

    Args:
        id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OpenAIError | OpenAIModelList]
    """

    kwargs = _get_kwargs(
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    *,
    client: AuthenticatedClient,
) -> OpenAIError | OpenAIModelList | None:
    """List the models serving an endpoint (OpenAI's API)

     The models taking the endpoint's traffic, as OpenAI lists models.

    Args:
        id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OpenAIError | OpenAIModelList
    """

    return sync_detailed(
        id=id,
        client=client,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
) -> Response[OpenAIError | OpenAIModelList]:
    """List the models serving an endpoint (OpenAI's API)

     The models taking the endpoint's traffic, as OpenAI lists models.

    Args:
        id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OpenAIError | OpenAIModelList]
    """

    kwargs = _get_kwargs(
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient,
) -> OpenAIError | OpenAIModelList | None:
    """List the models serving an endpoint (OpenAI's API)

     The models taking the endpoint's traffic, as OpenAI lists models.

    Args:
        id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OpenAIError | OpenAIModelList
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
        )
    ).parsed
