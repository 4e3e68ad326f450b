from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.team_goodput import TeamGoodput
from ...types import UNSET, Response, Unset


def _get_kwargs(
    team: str,
    *,
    month: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["month"] = month

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/teams/{team}/goodput/".format(
            team=quote(str(team), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | TeamGoodput | None:
    if response.status_code == 200:
        response_200 = TeamGoodput.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | TeamGoodput]:
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
    month: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | TeamGoodput]:
    """Retrieve a team's goodput in a month

     The team's goodput in a month (UTC; its jobs created in it, as its spend counts them):
    the sum of its jobs' categories and, as `idle`, the time its persistent resources were up
    with nothing running on them; the top causes of badput, each job's goodput, each idle
    resource.

    Args:
        team (str):
        month (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | TeamGoodput]
    """

    kwargs = _get_kwargs(
        team=team,
        month=month,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    team: str,
    *,
    client: AuthenticatedClient,
    month: str | Unset = UNSET,
) -> Detail | FieldErrors | TeamGoodput | None:
    """Retrieve a team's goodput in a month

     The team's goodput in a month (UTC; its jobs created in it, as its spend counts them):
    the sum of its jobs' categories and, as `idle`, the time its persistent resources were up
    with nothing running on them; the top causes of badput, each job's goodput, each idle
    resource.

    Args:
        team (str):
        month (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | TeamGoodput
    """

    return sync_detailed(
        team=team,
        client=client,
        month=month,
    ).parsed


async def asyncio_detailed(
    team: str,
    *,
    client: AuthenticatedClient,
    month: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | TeamGoodput]:
    """Retrieve a team's goodput in a month

     The team's goodput in a month (UTC; its jobs created in it, as its spend counts them):
    the sum of its jobs' categories and, as `idle`, the time its persistent resources were up
    with nothing running on them; the top causes of badput, each job's goodput, each idle
    resource.

    Args:
        team (str):
        month (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | TeamGoodput]
    """

    kwargs = _get_kwargs(
        team=team,
        month=month,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    team: str,
    *,
    client: AuthenticatedClient,
    month: str | Unset = UNSET,
) -> Detail | FieldErrors | TeamGoodput | None:
    """Retrieve a team's goodput in a month

     The team's goodput in a month (UTC; its jobs created in it, as its spend counts them):
    the sum of its jobs' categories and, as `idle`, the time its persistent resources were up
    with nothing running on them; the top causes of badput, each job's goodput, each idle
    resource.

    Args:
        team (str):
        month (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | TeamGoodput
    """

    return (
        await asyncio_detailed(
            team=team,
            client=client,
            month=month,
        )
    ).parsed
