from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.detail import Detail
from ...models.jobs_recommend_create_response_200 import JobsRecommendCreateResponse200
from ...models.jobs_recommend_create_response_400 import JobsRecommendCreateResponse400
from ...models.recommend_request_request import RecommendRequestRequest
from ...types import Response


def _get_kwargs(
    *,
    body: RecommendRequestRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/jobs/recommend/",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400 | None:
    if response.status_code == 200:
        response_200 = JobsRecommendCreateResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = JobsRecommendCreateResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Detail.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = cast(Any, None)
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
) -> Response[Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: RecommendRequestRequest,
) -> Response[Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400]:
    """Recommend the cheapest configurations for a model

     The cheapest valid configurations that fit the model, ranked by total cost.

    For those who can submit somewhere, as the compose form its results open in.

    Args:
        body (RecommendRequestRequest): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400]
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
    body: RecommendRequestRequest,
) -> Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400 | None:
    """Recommend the cheapest configurations for a model

     The cheapest valid configurations that fit the model, ranked by total cost.

    For those who can submit somewhere, as the compose form its results open in.

    Args:
        body (RecommendRequestRequest): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: RecommendRequestRequest,
) -> Response[Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400]:
    """Recommend the cheapest configurations for a model

     The cheapest valid configurations that fit the model, ranked by total cost.

    For those who can submit somewhere, as the compose form its results open in.

    Args:
        body (RecommendRequestRequest): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: RecommendRequestRequest,
) -> Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400 | None:
    """Recommend the cheapest configurations for a model

     The cheapest valid configurations that fit the model, ranked by total cost.

    For those who can submit somewhere, as the compose form its results open in.

    Args:
        body (RecommendRequestRequest): Refuses keys it does not know, so a typo is an error
            instead of a silent default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Detail | JobsRecommendCreateResponse200 | JobsRecommendCreateResponse400
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
