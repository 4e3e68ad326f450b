import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.field_errors import FieldErrors
from ...models.job_groups import JobGroups
from ...models.jobs_groups_retrieve_kind import JobsGroupsRetrieveKind
from ...models.jobs_groups_retrieve_state import JobsGroupsRetrieveState
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    accelerator: str | Unset = UNSET,
    config: str | Unset = UNSET,
    created_after: datetime.datetime | str | Unset = UNSET,
    created_before: datetime.datetime | str | Unset = UNSET,
    group_by: str,
    kind: JobsGroupsRetrieveKind | Unset = UNSET,
    state: JobsGroupsRetrieveState | Unset = UNSET,
    tag: str | Unset = UNSET,
    team: str | Unset = UNSET,
    user: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["accelerator"] = accelerator

    params["config"] = config

    json_created_after: str | Unset
    if isinstance(created_after, Unset):
        json_created_after = UNSET
    elif isinstance(created_after, datetime.datetime):
        json_created_after = created_after.isoformat()
    else:
        json_created_after = created_after
    params["created_after"] = json_created_after

    json_created_before: str | Unset
    if isinstance(created_before, Unset):
        json_created_before = UNSET
    elif isinstance(created_before, datetime.datetime):
        json_created_before = created_before.isoformat()
    else:
        json_created_before = created_before
    params["created_before"] = json_created_before

    params["group_by"] = group_by

    json_kind: str | Unset = UNSET
    if not isinstance(kind, Unset):
        json_kind = kind.value

    params["kind"] = json_kind

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state

    params["tag"] = tag

    params["team"] = team

    params["user"] = user

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/jobs/groups/",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Detail | FieldErrors | JobGroups | None:
    if response.status_code == 200:
        response_200 = JobGroups.from_dict(response.json())

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

    if response.status_code == 429:
        response_429 = Detail.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Detail | FieldErrors | JobGroups]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    accelerator: str | Unset = UNSET,
    config: str | Unset = UNSET,
    created_after: datetime.datetime | str | Unset = UNSET,
    created_before: datetime.datetime | str | Unset = UNSET,
    group_by: str,
    kind: JobsGroupsRetrieveKind | Unset = UNSET,
    state: JobsGroupsRetrieveState | Unset = UNSET,
    tag: str | Unset = UNSET,
    team: str | Unset = UNSET,
    user: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobGroups]:
    """List jobs grouped by a tag, a config key or the sweep

     The job list grouped by a tag key, a configuration key or the sweep, after the list's
    filters: each group's jobs by state, best and mean last loss, cost, running time,
    accelerator-hours and its newest jobs, the largest groups first (at most 200; `more` says
    there were others).

    Args:
        accelerator (str | Unset):
        config (str | Unset):
        created_after (datetime.datetime | str | Unset):
        created_before (datetime.datetime | str | Unset):
        group_by (str):
        kind (JobsGroupsRetrieveKind | Unset):
        state (JobsGroupsRetrieveState | Unset):
        tag (str | Unset):
        team (str | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobGroups]
    """

    kwargs = _get_kwargs(
        accelerator=accelerator,
        config=config,
        created_after=created_after,
        created_before=created_before,
        group_by=group_by,
        kind=kind,
        state=state,
        tag=tag,
        team=team,
        user=user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    accelerator: str | Unset = UNSET,
    config: str | Unset = UNSET,
    created_after: datetime.datetime | str | Unset = UNSET,
    created_before: datetime.datetime | str | Unset = UNSET,
    group_by: str,
    kind: JobsGroupsRetrieveKind | Unset = UNSET,
    state: JobsGroupsRetrieveState | Unset = UNSET,
    tag: str | Unset = UNSET,
    team: str | Unset = UNSET,
    user: str | Unset = UNSET,
) -> Detail | FieldErrors | JobGroups | None:
    """List jobs grouped by a tag, a config key or the sweep

     The job list grouped by a tag key, a configuration key or the sweep, after the list's
    filters: each group's jobs by state, best and mean last loss, cost, running time,
    accelerator-hours and its newest jobs, the largest groups first (at most 200; `more` says
    there were others).

    Args:
        accelerator (str | Unset):
        config (str | Unset):
        created_after (datetime.datetime | str | Unset):
        created_before (datetime.datetime | str | Unset):
        group_by (str):
        kind (JobsGroupsRetrieveKind | Unset):
        state (JobsGroupsRetrieveState | Unset):
        tag (str | Unset):
        team (str | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobGroups
    """

    return sync_detailed(
        client=client,
        accelerator=accelerator,
        config=config,
        created_after=created_after,
        created_before=created_before,
        group_by=group_by,
        kind=kind,
        state=state,
        tag=tag,
        team=team,
        user=user,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    accelerator: str | Unset = UNSET,
    config: str | Unset = UNSET,
    created_after: datetime.datetime | str | Unset = UNSET,
    created_before: datetime.datetime | str | Unset = UNSET,
    group_by: str,
    kind: JobsGroupsRetrieveKind | Unset = UNSET,
    state: JobsGroupsRetrieveState | Unset = UNSET,
    tag: str | Unset = UNSET,
    team: str | Unset = UNSET,
    user: str | Unset = UNSET,
) -> Response[Detail | FieldErrors | JobGroups]:
    """List jobs grouped by a tag, a config key or the sweep

     The job list grouped by a tag key, a configuration key or the sweep, after the list's
    filters: each group's jobs by state, best and mean last loss, cost, running time,
    accelerator-hours and its newest jobs, the largest groups first (at most 200; `more` says
    there were others).

    Args:
        accelerator (str | Unset):
        config (str | Unset):
        created_after (datetime.datetime | str | Unset):
        created_before (datetime.datetime | str | Unset):
        group_by (str):
        kind (JobsGroupsRetrieveKind | Unset):
        state (JobsGroupsRetrieveState | Unset):
        tag (str | Unset):
        team (str | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Detail | FieldErrors | JobGroups]
    """

    kwargs = _get_kwargs(
        accelerator=accelerator,
        config=config,
        created_after=created_after,
        created_before=created_before,
        group_by=group_by,
        kind=kind,
        state=state,
        tag=tag,
        team=team,
        user=user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    accelerator: str | Unset = UNSET,
    config: str | Unset = UNSET,
    created_after: datetime.datetime | str | Unset = UNSET,
    created_before: datetime.datetime | str | Unset = UNSET,
    group_by: str,
    kind: JobsGroupsRetrieveKind | Unset = UNSET,
    state: JobsGroupsRetrieveState | Unset = UNSET,
    tag: str | Unset = UNSET,
    team: str | Unset = UNSET,
    user: str | Unset = UNSET,
) -> Detail | FieldErrors | JobGroups | None:
    """List jobs grouped by a tag, a config key or the sweep

     The job list grouped by a tag key, a configuration key or the sweep, after the list's
    filters: each group's jobs by state, best and mean last loss, cost, running time,
    accelerator-hours and its newest jobs, the largest groups first (at most 200; `more` says
    there were others).

    Args:
        accelerator (str | Unset):
        config (str | Unset):
        created_after (datetime.datetime | str | Unset):
        created_before (datetime.datetime | str | Unset):
        group_by (str):
        kind (JobsGroupsRetrieveKind | Unset):
        state (JobsGroupsRetrieveState | Unset):
        tag (str | Unset):
        team (str | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Detail | FieldErrors | JobGroups
    """

    return (
        await asyncio_detailed(
            client=client,
            accelerator=accelerator,
            config=config,
            created_after=created_after,
            created_before=created_before,
            group_by=group_by,
            kind=kind,
            state=state,
            tag=tag,
            team=team,
            user=user,
        )
    ).parsed
