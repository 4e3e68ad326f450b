from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.teams_quotas_retrieve_response_200 import TeamsQuotasRetrieveResponse200
from ...types import Response


def _get_kwargs(
    team: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/teams/{team}/quotas/".format(
            team=quote(str(team), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | TeamsQuotasRetrieveResponse200 | None:
    if response.status_code == 200:
        response_200 = TeamsQuotasRetrieveResponse200.from_dict(response.json())

        return response_200

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
) -> Response[Detail | TeamsQuotasRetrieveResponse200]:
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
) -> Response[Detail | TeamsQuotasRetrieveResponse200]:
    """Retrieve a team's accelerator quota for the queue

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | TeamsQuotasRetrieveResponse200]
    """

    kwargs = _get_kwargs(
        team=team,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    team: str,
    *,
    client: AuthenticatedClient,
) -> Detail | TeamsQuotasRetrieveResponse200 | None:
    """Retrieve a team's accelerator quota for the queue

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | TeamsQuotasRetrieveResponse200
    """

    return sync_detailed(
        team=team,
        client=client,
    ).parsed


async def asyncio_detailed(
    team: str,
    *,
    client: AuthenticatedClient,
) -> Response[Detail | TeamsQuotasRetrieveResponse200]:
    """Retrieve a team's accelerator quota for the queue

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | TeamsQuotasRetrieveResponse200]
    """

    kwargs = _get_kwargs(
        team=team,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    team: str,
    *,
    client: AuthenticatedClient,
) -> Detail | TeamsQuotasRetrieveResponse200 | None:
    """Retrieve a team's accelerator quota for the queue

     GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only).

    Args:
        team (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | TeamsQuotasRetrieveResponse200
    """

    return (
        await asyncio_detailed(
            team=team,
            client=client,
        )
    ).parsed
