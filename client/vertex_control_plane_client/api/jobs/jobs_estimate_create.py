from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.estimate_custom_job_request import EstimateCustomJobRequest
from ...models.estimate_request_request import EstimateRequestRequest
from ...models.field_errors import FieldErrors
from ...models.jobs_estimate_create_response_200 import JobsEstimateCreateResponse200
from ...types import Response


def _get_kwargs(
    *,
    body: EstimateCustomJobRequest | EstimateRequestRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/jobs/estimate/",
    }

    if isinstance(body, EstimateRequestRequest):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | JobsEstimateCreateResponse200 | None:
    if response.status_code == 200:
        response_200 = JobsEstimateCreateResponse200.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | JobsEstimateCreateResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: EstimateCustomJobRequest | EstimateRequestRequest,
) -> Response[Detail | FieldErrors | JobsEstimateCreateResponse200]:
    """Estimate a job's cost

     What a job would cost: total and per pool, at on-demand, spot and flex rates.

    Args:
        body (EstimateCustomJobRequest | EstimateRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobsEstimateCreateResponse200]
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
    body: EstimateCustomJobRequest | EstimateRequestRequest,
) -> Detail | FieldErrors | JobsEstimateCreateResponse200 | None:
    """Estimate a job's cost

     What a job would cost: total and per pool, at on-demand, spot and flex rates.

    Args:
        body (EstimateCustomJobRequest | EstimateRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobsEstimateCreateResponse200
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: EstimateCustomJobRequest | EstimateRequestRequest,
) -> Response[Detail | FieldErrors | JobsEstimateCreateResponse200]:
    """Estimate a job's cost

     What a job would cost: total and per pool, at on-demand, spot and flex rates.

    Args:
        body (EstimateCustomJobRequest | EstimateRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobsEstimateCreateResponse200]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: EstimateCustomJobRequest | EstimateRequestRequest,
) -> Detail | FieldErrors | JobsEstimateCreateResponse200 | None:
    """Estimate a job's cost

     What a job would cost: total and per pool, at on-demand, spot and flex rates.

    Args:
        body (EstimateCustomJobRequest | EstimateRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobsEstimateCreateResponse200
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
