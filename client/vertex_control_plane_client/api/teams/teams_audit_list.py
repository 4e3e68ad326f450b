from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.paginated_audit_entry_list import PaginatedAuditEntryList
from ...models.teams_audit_list_action import TeamsAuditListAction
from ...types import UNSET, Response, Unset


def _get_kwargs(
    team: str,
    *,
    action: TeamsAuditListAction | Unset = UNSET,
    actor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_action: str | Unset = UNSET
    if not isinstance(action, Unset):
        json_action = action.value

    params["action"] = json_action

    params["actor"] = actor

    params["limit"] = limit

    params["offset"] = offset

    params["since"] = since

    params["until"] = until

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/teams/{team}/audit/".format(
            team=quote(str(team), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | PaginatedAuditEntryList | None:
    if response.status_code == 200:
        response_200 = PaginatedAuditEntryList.from_dict(response.json())

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
) -> Response[Detail | FieldErrors | PaginatedAuditEntryList]:
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
    action: TeamsAuditListAction | Unset = UNSET,
    actor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | PaginatedAuditEntryList]:
    """List a team's audit log

     Who submitted, cancelled, cloned and resubmitted jobs, and who changed the team's
    channels, templates and budgets; newest first. Team admins only.

    Args:
        team (str):
        action (TeamsAuditListAction | Unset):
        actor (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        since (str | Unset):
        until (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | PaginatedAuditEntryList]
    """

    kwargs = _get_kwargs(
        team=team,
        action=action,
        actor=actor,
        limit=limit,
        offset=offset,
        since=since,
        until=until,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    team: str,
    *,
    client: AuthenticatedClient,
    action: TeamsAuditListAction | Unset = UNSET,
    actor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
) -> Detail | FieldErrors | PaginatedAuditEntryList | None:
    """List a team's audit log

     Who submitted, cancelled, cloned and resubmitted jobs, and who changed the team's
    channels, templates and budgets; newest first. Team admins only.

    Args:
        team (str):
        action (TeamsAuditListAction | Unset):
        actor (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        since (str | Unset):
        until (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | PaginatedAuditEntryList
    """

    return sync_detailed(
        team=team,
        client=client,
        action=action,
        actor=actor,
        limit=limit,
        offset=offset,
        since=since,
        until=until,
    ).parsed


async def asyncio_detailed(
    team: str,
    *,
    client: AuthenticatedClient,
    action: TeamsAuditListAction | Unset = UNSET,
    actor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | PaginatedAuditEntryList]:
    """List a team's audit log

     Who submitted, cancelled, cloned and resubmitted jobs, and who changed the team's
    channels, templates and budgets; newest first. Team admins only.

    Args:
        team (str):
        action (TeamsAuditListAction | Unset):
        actor (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        since (str | Unset):
        until (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | PaginatedAuditEntryList]
    """

    kwargs = _get_kwargs(
        team=team,
        action=action,
        actor=actor,
        limit=limit,
        offset=offset,
        since=since,
        until=until,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    team: str,
    *,
    client: AuthenticatedClient,
    action: TeamsAuditListAction | Unset = UNSET,
    actor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
) -> Detail | FieldErrors | PaginatedAuditEntryList | None:
    """List a team's audit log

     Who submitted, cancelled, cloned and resubmitted jobs, and who changed the team's
    channels, templates and budgets; newest first. Team admins only.

    Args:
        team (str):
        action (TeamsAuditListAction | Unset):
        actor (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        since (str | Unset):
        until (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | PaginatedAuditEntryList
    """

    return (
        await asyncio_detailed(
            team=team,
            client=client,
            action=action,
            actor=actor,
            limit=limit,
            offset=offset,
            since=since,
            until=until,
        )
    ).parsed
