from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.queue_entry import QueueEntry
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    team: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["team"] = team

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/queue/",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | list[QueueEntry] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = QueueEntry.from_dict(response_200_item_data)

            response_200.append(response_200_item)

        return response_200

    if response.status_code == 400:
        response_400 = FieldErrors.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Detail.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Detail.from_dict(response.json())

        return response_403

    if response.status_code == 429:
        response_429 = Detail.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Detail | FieldErrors | list[QueueEntry]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    team: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | list[QueueEntry]]:
    """List the queue in front of Vertex

     The queue in front of Vertex as your teams see it: jobs waiting here in place order,
    with why, then the jobs holding accelerators on Vertex (borrowing or not).

    Args:
        team (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | list[QueueEntry]]
    """

    kwargs = _get_kwargs(
        team=team,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    team: str | Unset = UNSET,
) -> Detail | FieldErrors | list[QueueEntry] | None:
    """List the queue in front of Vertex

     The queue in front of Vertex as your teams see it: jobs waiting here in place order,
    with why, then the jobs holding accelerators on Vertex (borrowing or not).

    Args:
        team (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | list[QueueEntry]
    """

    return sync_detailed(
        client=client,
        team=team,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    team: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | list[QueueEntry]]:
    """List the queue in front of Vertex

     The queue in front of Vertex as your teams see it: jobs waiting here in place order,
    with why, then the jobs holding accelerators on Vertex (borrowing or not).

    Args:
        team (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | list[QueueEntry]]
    """

    kwargs = _get_kwargs(
        team=team,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    team: str | Unset = UNSET,
) -> Detail | FieldErrors | list[QueueEntry] | None:
    """List the queue in front of Vertex

     The queue in front of Vertex as your teams see it: jobs waiting here in place order,
    with why, then the jobs holding accelerators on Vertex (borrowing or not).

    Args:
        team (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | list[QueueEntry]
    """

    return (
        await asyncio_detailed(
            client=client,
            team=team,
        )
    ).parsed
