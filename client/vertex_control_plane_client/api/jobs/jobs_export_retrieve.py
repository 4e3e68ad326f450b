from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.jobs_export_retrieve_fmt import JobsExportRetrieveFmt
from ...models.jobs_export_retrieve_response_200 import JobsExportRetrieveResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: int,
    *,
    fmt: JobsExportRetrieveFmt | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_fmt: str | Unset = UNSET
    if not isinstance(fmt, Unset):
        json_fmt = fmt.value

    params["fmt"] = json_fmt

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/jobs/{id}/export/".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | JobsExportRetrieveResponse200 | None:
    if response.status_code == 200:
        response_200 = JobsExportRetrieveResponse200.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | JobsExportRetrieveResponse200]:
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
    fmt: JobsExportRetrieveFmt | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobsExportRetrieveResponse200]:
    """Export a submitted job's CustomJob

     A submitted job's CustomJob (as stored, before per-attempt names) in an export format.

    Args:
        id (int):
        fmt (JobsExportRetrieveFmt | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobsExportRetrieveResponse200]
    """

    kwargs = _get_kwargs(
        id=id,
        fmt=fmt,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    *,
    client: AuthenticatedClient,
    fmt: JobsExportRetrieveFmt | Unset = UNSET,
) -> Detail | FieldErrors | JobsExportRetrieveResponse200 | None:
    """Export a submitted job's CustomJob

     A submitted job's CustomJob (as stored, before per-attempt names) in an export format.

    Args:
        id (int):
        fmt (JobsExportRetrieveFmt | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobsExportRetrieveResponse200
    """

    return sync_detailed(
        id=id,
        client=client,
        fmt=fmt,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
    fmt: JobsExportRetrieveFmt | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobsExportRetrieveResponse200]:
    """Export a submitted job's CustomJob

     A submitted job's CustomJob (as stored, before per-attempt names) in an export format.

    Args:
        id (int):
        fmt (JobsExportRetrieveFmt | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobsExportRetrieveResponse200]
    """

    kwargs = _get_kwargs(
        id=id,
        fmt=fmt,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient,
    fmt: JobsExportRetrieveFmt | Unset = UNSET,
) -> Detail | FieldErrors | JobsExportRetrieveResponse200 | None:
    """Export a submitted job's CustomJob

     A submitted job's CustomJob (as stored, before per-attempt names) in an export format.

    Args:
        id (int):
        fmt (JobsExportRetrieveFmt | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobsExportRetrieveResponse200
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            fmt=fmt,
        )
    ).parsed
