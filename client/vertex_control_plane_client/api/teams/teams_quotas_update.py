from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.teams_quotas_update_body import TeamsQuotasUpdateBody
from ...models.teams_quotas_update_response_200 import TeamsQuotasUpdateResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    team: str,
    *,
    body: TeamsQuotasUpdateBody | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/api/v1/teams/{team}/quotas/".format(
            team=quote(str(team), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | TeamsQuotasUpdateResponse200 | None:
    if response.status_code == 200:
        response_200 = TeamsQuotasUpdateResponse200.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | TeamsQuotasUpdateResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    team: str,
    *,
    client: AuthenticatedClient,
    body: TeamsQuotasUpdateBody | Unset = UNSET,
) -> Response[Detail | FieldErrors | TeamsQuotasUpdateResponse200]:
    """Set a team's accelerator quota for the queue (site admins)

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):
        body (TeamsQuotasUpdateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | TeamsQuotasUpdateResponse200]
    """

    kwargs = _get_kwargs(
        team=team,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    team: str,
    *,
    client: AuthenticatedClient,
    body: TeamsQuotasUpdateBody | Unset = UNSET,
) -> Detail | FieldErrors | TeamsQuotasUpdateResponse200 | None:
    """Set a team's accelerator quota for the queue (site admins)

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):
        body (TeamsQuotasUpdateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | TeamsQuotasUpdateResponse200
    """

    return sync_detailed(
        team=team,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    team: str,
    *,
    client: AuthenticatedClient,
    body: TeamsQuotasUpdateBody | Unset = UNSET,
) -> Response[Detail | FieldErrors | TeamsQuotasUpdateResponse200]:
    """Set a team's accelerator quota for the queue (site admins)

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):
        body (TeamsQuotasUpdateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | TeamsQuotasUpdateResponse200]
    """

    kwargs = _get_kwargs(
        team=team,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    team: str,
    *,
    client: AuthenticatedClient,
    body: TeamsQuotasUpdateBody | Unset = UNSET,
) -> Detail | FieldErrors | TeamsQuotasUpdateResponse200 | None:
    """Set a team's accelerator quota for the queue (site admins)

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):
        body (TeamsQuotasUpdateBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | TeamsQuotasUpdateResponse200
    """

    return (
        await asyncio_detailed(
            team=team,
            client=client,
            body=body,
        )
    ).parsed
