from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.channel import Channel
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.patched_channel_request import PatchedChannelRequest
from ...types import UNSET, Response, Unset


def _get_kwargs(
    team: str,
    id: int,
    *,
    body: PatchedChannelRequest | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/api/v1/teams/{team}/channels/{id}/".format(
            team=quote(str(team), safe=""),
            id=quote(str(id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Channel | Detail | FieldErrors | None:
    if response.status_code == 200:
        response_200 = Channel.from_dict(response.json())

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
) -> Response[Channel | Detail | FieldErrors]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    team: str,
    id: int,
    *,
    client: AuthenticatedClient,
    body: PatchedChannelRequest | Unset = UNSET,
) -> Response[Channel | Detail | FieldErrors]:
    """Change a Slack channel

     Members see a team's channels; only its admins change them.

    Args:
        team (str):
        id (int):
        body (PatchedChannelRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Channel | Detail | FieldErrors]
    """

    kwargs = _get_kwargs(
        team=team,
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    team: str,
    id: int,
    *,
    client: AuthenticatedClient,
    body: PatchedChannelRequest | Unset = UNSET,
) -> Channel | Detail | FieldErrors | None:
    """Change a Slack channel

     Members see a team's channels; only its admins change them.

    Args:
        team (str):
        id (int):
        body (PatchedChannelRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Channel | Detail | FieldErrors
    """

    return sync_detailed(
        team=team,
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    team: str,
    id: int,
    *,
    client: AuthenticatedClient,
    body: PatchedChannelRequest | Unset = UNSET,
) -> Response[Channel | Detail | FieldErrors]:
    """Change a Slack channel

     Members see a team's channels; only its admins change them.

    Args:
        team (str):
        id (int):
        body (PatchedChannelRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Channel | Detail | FieldErrors]
    """

    kwargs = _get_kwargs(
        team=team,
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    team: str,
    id: int,
    *,
    client: AuthenticatedClient,
    body: PatchedChannelRequest | Unset = UNSET,
) -> Channel | Detail | FieldErrors | None:
    """Change a Slack channel

     Members see a team's channels; only its admins change them.

    Args:
        team (str):
        id (int):
        body (PatchedChannelRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Channel | Detail | FieldErrors
    """

    return (
        await asyncio_detailed(
            team=team,
            id=id,
            client=client,
            body=body,
        )
    ).parsed
