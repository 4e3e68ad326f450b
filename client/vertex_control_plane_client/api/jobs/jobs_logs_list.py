from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.jobs_logs_list_order import JobsLogsListOrder
from ...models.jobs_logs_list_severity_type_0 import JobsLogsListSeverityType0
from ...models.paginated_log_line_list import PaginatedLogLineList
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: int,
    *,
    after: str | Unset = UNSET,
    attempt: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    order: JobsLogsListOrder | Unset = UNSET,
    q: str | Unset = UNSET,
    replica: str | Unset = UNSET,
    severity: JobsLogsListSeverityType0 | str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["after"] = after

    params["attempt"] = attempt

    params["limit"] = limit

    params["offset"] = offset

    json_order: str | Unset = UNSET
    if not isinstance(order, Unset):
        json_order = order.value

    params["order"] = json_order

    params["q"] = q

    params["replica"] = replica

    json_severity: str | Unset
    if isinstance(severity, Unset):
        json_severity = UNSET
    elif isinstance(severity, JobsLogsListSeverityType0):
        json_severity = severity.value
    else:
        json_severity = severity
    params["severity"] = json_severity

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/jobs/{id}/logs/".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | PaginatedLogLineList | None:
    if response.status_code == 200:
        response_200 = PaginatedLogLineList.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | PaginatedLogLineList]:
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
    after: str | Unset = UNSET,
    attempt: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    order: JobsLogsListOrder | Unset = UNSET,
    q: str | Unset = UNSET,
    replica: str | Unset = UNSET,
    severity: JobsLogsListSeverityType0 | str | Unset = UNSET,
) -> Response[Detail | FieldErrors | PaginatedLogLineList]:
    """List a job's log lines

    Args:
        id (int):
        after (str | Unset):
        attempt (int | Unset):
        limit (int | Unset):
        offset (int | Unset):
        order (JobsLogsListOrder | Unset):
        q (str | Unset):
        replica (str | Unset):
        severity (JobsLogsListSeverityType0 | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | PaginatedLogLineList]
    """

    kwargs = _get_kwargs(
        id=id,
        after=after,
        attempt=attempt,
        limit=limit,
        offset=offset,
        order=order,
        q=q,
        replica=replica,
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
    after: str | Unset = UNSET,
    attempt: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    order: JobsLogsListOrder | Unset = UNSET,
    q: str | Unset = UNSET,
    replica: str | Unset = UNSET,
    severity: JobsLogsListSeverityType0 | str | Unset = UNSET,
) -> Detail | FieldErrors | PaginatedLogLineList | None:
    """List a job's log lines

    Args:
        id (int):
        after (str | Unset):
        attempt (int | Unset):
        limit (int | Unset):
        offset (int | Unset):
        order (JobsLogsListOrder | Unset):
        q (str | Unset):
        replica (str | Unset):
        severity (JobsLogsListSeverityType0 | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | PaginatedLogLineList
    """

    return sync_detailed(
        id=id,
        client=client,
        after=after,
        attempt=attempt,
        limit=limit,
        offset=offset,
        order=order,
        q=q,
        replica=replica,
        severity=severity,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    attempt: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    order: JobsLogsListOrder | Unset = UNSET,
    q: str | Unset = UNSET,
    replica: str | Unset = UNSET,
    severity: JobsLogsListSeverityType0 | str | Unset = UNSET,
) -> Response[Detail | FieldErrors | PaginatedLogLineList]:
    """List a job's log lines

    Args:
        id (int):
        after (str | Unset):
        attempt (int | Unset):
        limit (int | Unset):
        offset (int | Unset):
        order (JobsLogsListOrder | Unset):
        q (str | Unset):
        replica (str | Unset):
        severity (JobsLogsListSeverityType0 | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | PaginatedLogLineList]
    """

    kwargs = _get_kwargs(
        id=id,
        after=after,
        attempt=attempt,
        limit=limit,
        offset=offset,
        order=order,
        q=q,
        replica=replica,
        severity=severity,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    attempt: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    order: JobsLogsListOrder | Unset = UNSET,
    q: str | Unset = UNSET,
    replica: str | Unset = UNSET,
    severity: JobsLogsListSeverityType0 | str | Unset = UNSET,
) -> Detail | FieldErrors | PaginatedLogLineList | None:
    """List a job's log lines

    Args:
        id (int):
        after (str | Unset):
        attempt (int | Unset):
        limit (int | Unset):
        offset (int | Unset):
        order (JobsLogsListOrder | Unset):
        q (str | Unset):
        replica (str | Unset):
        severity (JobsLogsListSeverityType0 | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | PaginatedLogLineList
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            after=after,
            attempt=attempt,
            limit=limit,
            offset=offset,
            order=order,
            q=q,
            replica=replica,
            severity=severity,
        )
    ).parsed
