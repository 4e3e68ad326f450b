from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.sweeps_import_create_body import SweepsImportCreateBody
from ...models.sweeps_import_create_response_200 import SweepsImportCreateResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: SweepsImportCreateBody | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/sweeps/import/",
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | SweepsImportCreateResponse200 | None:
    if response.status_code == 200:
        response_200 = SweepsImportCreateResponse200.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | SweepsImportCreateResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: SweepsImportCreateBody | Unset = UNSET,
) -> Response[Detail | FieldErrors | SweepsImportCreateResponse200]:
    """Import a tuning job as a sweep request

     A gcloud YAML or REST JSON tuning job -> the sweep request (nothing is created).

    Args:
        body (SweepsImportCreateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | SweepsImportCreateResponse200]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: SweepsImportCreateBody | Unset = UNSET,
) -> Detail | FieldErrors | SweepsImportCreateResponse200 | None:
    """Import a tuning job as a sweep request

     A gcloud YAML or REST JSON tuning job -> the sweep request (nothing is created).

    Args:
        body (SweepsImportCreateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | SweepsImportCreateResponse200
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: SweepsImportCreateBody | Unset = UNSET,
) -> Response[Detail | FieldErrors | SweepsImportCreateResponse200]:
    """Import a tuning job as a sweep request

     A gcloud YAML or REST JSON tuning job -> the sweep request (nothing is created).

    Args:
        body (SweepsImportCreateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | SweepsImportCreateResponse200]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: SweepsImportCreateBody | Unset = UNSET,
) -> Detail | FieldErrors | SweepsImportCreateResponse200 | None:
    """Import a tuning job as a sweep request

     A gcloud YAML or REST JSON tuning job -> the sweep request (nothing is created).

    Args:
        body (SweepsImportCreateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | SweepsImportCreateResponse200
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
