from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.runtime_trial import RuntimeTrial
from ...models.start_trial_request import StartTrialRequest
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: int,
    *,
    body: StartTrialRequest,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/serving/models/{id}/trials/".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | RuntimeTrial | None:
    if response.status_code == 201:
        response_201 = RuntimeTrial.from_dict(response.json())

        return response_201

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

    if response.status_code == 409:
        response_409 = FieldErrors.from_dict(response.json())

        return response_409

    if response.status_code == 429:
        response_429 = Detail.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Detail | FieldErrors | RuntimeTrial]:
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
    body: StartTrialRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | RuntimeTrial]:
    """Start a runtime trial of a model

    Args:
        id (int):
        idempotency_key (str | Unset):
        body (StartTrialRequest): Refuses keys it does not know, so a typo is an error instead of
            a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | RuntimeTrial]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    *,
    client: AuthenticatedClient,
    body: StartTrialRequest,
    idempotency_key: str | Unset = UNSET,
) -> Detail | FieldErrors | RuntimeTrial | None:
    """Start a runtime trial of a model

    Args:
        id (int):
        idempotency_key (str | Unset):
        body (StartTrialRequest): Refuses keys it does not know, so a typo is an error instead of
            a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | RuntimeTrial
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient,
    body: StartTrialRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | RuntimeTrial]:
    """Start a runtime trial of a model

    Args:
        id (int):
        idempotency_key (str | Unset):
        body (StartTrialRequest): Refuses keys it does not know, so a typo is an error instead of
            a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | RuntimeTrial]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient,
    body: StartTrialRequest,
    idempotency_key: str | Unset = UNSET,
) -> Detail | FieldErrors | RuntimeTrial | None:
    """Start a runtime trial of a model

    Args:
        id (int):
        idempotency_key (str | Unset):
        body (StartTrialRequest): Refuses keys it does not know, so a typo is an error instead of
            a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | RuntimeTrial
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
