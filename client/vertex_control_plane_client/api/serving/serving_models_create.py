from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.model_entry import ModelEntry
from ...models.register_model_request import RegisterModelRequest
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: RegisterModelRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/serving/models/",
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | ModelEntry | None:
    if response.status_code == 201:
        response_201 = ModelEntry.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | ModelEntry]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: RegisterModelRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | ModelEntry]:
    """Register a model from a job

    Args:
        idempotency_key (str | Unset):
        body (RegisterModelRequest | Unset): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | ModelEntry]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: RegisterModelRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Detail | FieldErrors | ModelEntry | None:
    """Register a model from a job

    Args:
        idempotency_key (str | Unset):
        body (RegisterModelRequest | Unset): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | ModelEntry
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: RegisterModelRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | ModelEntry]:
    """Register a model from a job

    Args:
        idempotency_key (str | Unset):
        body (RegisterModelRequest | Unset): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | ModelEntry]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: RegisterModelRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Detail | FieldErrors | ModelEntry | None:
    """Register a model from a job

    Args:
        idempotency_key (str | Unset):
        body (RegisterModelRequest | Unset): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | ModelEntry
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
