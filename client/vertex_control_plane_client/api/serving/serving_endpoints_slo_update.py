from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.slo import Slo
from ...models.slo_request import SloRequest
from ...types import Response


def _get_kwargs(
    id: int,
    *,
    body: SloRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/api/v1/serving/endpoints/{id}/slo/".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | Slo | None:
    if response.status_code == 200:
        response_200 = Slo.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | Slo]:
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
    body: SloRequest,
) -> Response[Detail | FieldErrors | Slo]:
    """Set an endpoint's SLO

    Args:
        id (int):
        body (SloRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | Slo]
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
    body: SloRequest,
) -> Detail | FieldErrors | Slo | None:
    """Set an endpoint's SLO

    Args:
        id (int):
        body (SloRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | Slo
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
    body: SloRequest,
) -> Response[Detail | FieldErrors | Slo]:
    """Set an endpoint's SLO

    Args:
        id (int):
        body (SloRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | Slo]
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
    body: SloRequest,
) -> Detail | FieldErrors | Slo | None:
    """Set an endpoint's SLO

    Args:
        id (int):
        body (SloRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | Slo
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
