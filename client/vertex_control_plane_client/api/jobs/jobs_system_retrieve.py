from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.job_system import JobSystem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: int,
    *,
    minutes: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["minutes"] = minutes

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/jobs/{id}/system/".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | JobSystem | None:
    if response.status_code == 200:
        response_200 = JobSystem.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = Detail.from_dict(response.json())

        return response_404

    if response.status_code == 429:
        response_429 = Detail.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Detail | FieldErrors | JobSystem]:
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
    minutes: int | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobSystem]:
    """Retrieve each replica's CPU, memory and accelerator use

     CPU, memory and accelerator use of each replica of the job's current attempt, from Cloud
    Monitoring (the local emulator samples its replicas' processes): the latest sample and the
    history over the last `minutes` (up to the job's end). 503 when Cloud Monitoring cannot be
    read.

    Args:
        id (int):
        minutes (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobSystem]
    """

    kwargs = _get_kwargs(
        id=id,
        minutes=minutes,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    *,
    client: AuthenticatedClient,
    minutes: int | Unset = UNSET,
) -> Detail | FieldErrors | JobSystem | None:
    """Retrieve each replica's CPU, memory and accelerator use

     CPU, memory and accelerator use of each replica of the job's current attempt, from Cloud
    Monitoring (the local emulator samples its replicas' processes): the latest sample and the
    history over the last `minutes` (up to the job's end). 503 when Cloud Monitoring cannot be
    read.

    Args:
        id (int):
        minutes (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobSystem
    """

    return sync_detailed(
        id=id,
        client=client,
        minutes=minutes,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
    minutes: int | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobSystem]:
    """Retrieve each replica's CPU, memory and accelerator use

     CPU, memory and accelerator use of each replica of the job's current attempt, from Cloud
    Monitoring (the local emulator samples its replicas' processes): the latest sample and the
    history over the last `minutes` (up to the job's end). 503 when Cloud Monitoring cannot be
    read.

    Args:
        id (int):
        minutes (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobSystem]
    """

    kwargs = _get_kwargs(
        id=id,
        minutes=minutes,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient,
    minutes: int | Unset = UNSET,
) -> Detail | FieldErrors | JobSystem | None:
    """Retrieve each replica's CPU, memory and accelerator use

     CPU, memory and accelerator use of each replica of the job's current attempt, from Cloud
    Monitoring (the local emulator samples its replicas' processes): the latest sample and the
    history over the last `minutes` (up to the job's end). 503 when Cloud Monitoring cannot be
    read.

    Args:
        id (int):
        minutes (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobSystem
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            minutes=minutes,
        )
    ).parsed
