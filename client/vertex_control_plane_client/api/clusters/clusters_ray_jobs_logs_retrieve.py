from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.clusters_ray_jobs_logs_retrieve_response_200 import (
    ClustersRayJobsLogsRetrieveResponse200,
)
from ...models.clusters_ray_jobs_logs_retrieve_severity_type_0 import (
    ClustersRayJobsLogsRetrieveSeverityType0,
)
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: int,
    *,
    q: str | Unset = UNSET,
    severity: ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["q"] = q

    json_severity: int | str | Unset
    if isinstance(severity, Unset):
        json_severity = UNSET
    elif isinstance(severity, ClustersRayJobsLogsRetrieveSeverityType0):
        json_severity = severity.value
    else:
        json_severity = severity
    params["severity"] = json_severity

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/clusters/ray-jobs/{id}/logs/".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors | None:
    if response.status_code == 200:
        response_200 = ClustersRayJobsLogsRetrieveResponse200.from_dict(response.json())

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
) -> Response[ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors]:
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
    q: str | Unset = UNSET,
    severity: ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset = UNSET,
) -> Response[ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors]:
    """Read a Ray job's logs

    Args:
        id (int):
        q (str | Unset):
        severity (ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors]
    """

    kwargs = _get_kwargs(
        id=id,
        q=q,
        severity=severity,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    *,
    client: AuthenticatedClient,
    q: str | Unset = UNSET,
    severity: ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset = UNSET,
) -> ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors | None:
    """Read a Ray job's logs

    Args:
        id (int):
        q (str | Unset):
        severity (ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors
    """

    return sync_detailed(
        id=id,
        client=client,
        q=q,
        severity=severity,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
    q: str | Unset = UNSET,
    severity: ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset = UNSET,
) -> Response[ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors]:
    """Read a Ray job's logs

    Args:
        id (int):
        q (str | Unset):
        severity (ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors]
    """

    kwargs = _get_kwargs(
        id=id,
        q=q,
        severity=severity,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient,
    q: str | Unset = UNSET,
    severity: ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset = UNSET,
) -> ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors | None:
    """Read a Ray job's logs

    Args:
        id (int):
        q (str | Unset):
        severity (ClustersRayJobsLogsRetrieveSeverityType0 | int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClustersRayJobsLogsRetrieveResponse200 | Detail | FieldErrors
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            q=q,
            severity=severity,
        )
    ).parsed
