from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.custom_job_request import CustomJobRequest
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.job_request_request import JobRequestRequest
from ...models.jobs_export_create_fmt import JobsExportCreateFmt
from ...models.jobs_export_create_response_200 import JobsExportCreateResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: CustomJobRequest | JobRequestRequest,
    fmt: JobsExportCreateFmt | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    json_fmt: str | Unset = UNSET
    if not isinstance(fmt, Unset):
        json_fmt = fmt.value

    params["fmt"] = json_fmt

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/jobs/export/",
        "params": params,
    }

    if isinstance(body, JobRequestRequest):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | JobsExportCreateResponse200 | None:
    if response.status_code == 200:
        response_200 = JobsExportCreateResponse200.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | JobsExportCreateResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CustomJobRequest | JobRequestRequest,
    fmt: JobsExportCreateFmt | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobsExportCreateResponse200]:
    """Export a job request (gcloud YAML, REST JSON or Python)

     A job (either form) as gcloud YAML, REST JSON or a Python snippet; 400 if Vertex would
    refuse it. The team's policy is not applied: an export is a document, not a submission.

    Args:
        fmt (JobsExportCreateFmt | Unset):
        body (CustomJobRequest | JobRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobsExportCreateResponse200]
    """

    kwargs = _get_kwargs(
        body=body,
        fmt=fmt,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: CustomJobRequest | JobRequestRequest,
    fmt: JobsExportCreateFmt | Unset = UNSET,
) -> Detail | FieldErrors | JobsExportCreateResponse200 | None:
    """Export a job request (gcloud YAML, REST JSON or Python)

     A job (either form) as gcloud YAML, REST JSON or a Python snippet; 400 if Vertex would
    refuse it. The team's policy is not applied: an export is a document, not a submission.

    Args:
        fmt (JobsExportCreateFmt | Unset):
        body (CustomJobRequest | JobRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobsExportCreateResponse200
    """

    return sync_detailed(
        client=client,
        body=body,
        fmt=fmt,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CustomJobRequest | JobRequestRequest,
    fmt: JobsExportCreateFmt | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobsExportCreateResponse200]:
    """Export a job request (gcloud YAML, REST JSON or Python)

     A job (either form) as gcloud YAML, REST JSON or a Python snippet; 400 if Vertex would
    refuse it. The team's policy is not applied: an export is a document, not a submission.

    Args:
        fmt (JobsExportCreateFmt | Unset):
        body (CustomJobRequest | JobRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobsExportCreateResponse200]
    """

    kwargs = _get_kwargs(
        body=body,
        fmt=fmt,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CustomJobRequest | JobRequestRequest,
    fmt: JobsExportCreateFmt | Unset = UNSET,
) -> Detail | FieldErrors | JobsExportCreateResponse200 | None:
    """Export a job request (gcloud YAML, REST JSON or Python)

     A job (either form) as gcloud YAML, REST JSON or a Python snippet; 400 if Vertex would
    refuse it. The team's policy is not applied: an export is a document, not a submission.

    Args:
        fmt (JobsExportCreateFmt | Unset):
        body (CustomJobRequest | JobRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobsExportCreateResponse200
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            fmt=fmt,
        )
    ).parsed
