"""The API's rate limit as a sliding window of two counted windows: the previous window's
requests weigh in by how much of it is still within the period, a refused request is not
counted, a client is its address whatever X-Forwarded-For it sends, and any key fits."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import RequestFactory
from rest_framework.request import Request

from controlplane.security.models import RateWindow
from controlplane.security.throttling import AnonRate, UserRate

PERIOD = 60.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def anonymous(address: str = "10.0.0.7", forwarded: str = "") -> Request:
    from django.contrib.auth.models import AnonymousUser

    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}
    request = Request(RequestFactory().get("/api/schema/", REMOTE_ADDR=address, **headers))
    request.user = AnonymousUser()
    return request


def allowed(throttle: Any, request: Request, clock: Clock) -> bool:
    throttle.timer = clock
    return bool(throttle.allow_request(request, None))


@pytest.mark.django_db
def test_the_previous_window_weighs_in_by_its_share_of_the_period(settings: Any) -> None:
    settings.CP_API_RATE_ANON = "10/minute"
    clock = Clock(1000 * PERIOD + 50)  # 50 s into a window
    request = anonymous()
    assert [allowed(AnonRate(), request, clock) for _ in range(10)] == [True] * 10
    assert not allowed(AnonRate(), request, clock)
    # 15 s into the next window, three quarters of the last one still count: 7.5 of 10.
    clock.now = 1001 * PERIOD + 15
    assert [allowed(AnonRate(), request, clock) for _ in range(3)] == [True, True, True]
    refused = AnonRate()
    assert not allowed(refused, request, clock)
    # 3 + 10 x (1 - t/60) falls below 10 once t passes 18 s: 3 s from now, as Retry-After says.
    assert refused.wait() == pytest.approx(3, abs=0.01)
    clock.now = 1001 * PERIOD + 17.5
    assert not allowed(AnonRate(), request, clock)
    clock.now = 1001 * PERIOD + 18.5
    assert allowed(AnonRate(), request, clock)


@pytest.mark.django_db
def test_a_refused_request_is_not_counted(settings: Any) -> None:
    settings.CP_API_RATE_ANON = "2/minute"
    clock = Clock(5000 * PERIOD + 1)
    request = anonymous()
    results = [allowed(AnonRate(), request, clock) for _ in range(20)]
    assert results == [True, True] + [False] * 18
    key = "throttle_anon_10.0.0.7"
    assert RateWindow.objects.get(key=key, slot=5000).n == 2


@pytest.mark.django_db
def test_a_client_is_its_address_not_the_forwarded_header_it_sends(settings: Any) -> None:
    settings.CP_API_RATE_ANON = "3/minute"
    clock = Clock(7000 * PERIOD)
    spoofed = [allowed(AnonRate(), anonymous(forwarded=f"203.0.113.{n}"), clock)
               for n in range(6)]
    assert spoofed == [True, True, True, False, False, False]
    assert allowed(AnonRate(), anonymous(address="10.0.0.8"), clock)


@pytest.mark.django_db
def test_older_windows_are_removed_and_any_key_fits(settings: Any) -> None:
    settings.CP_API_RATE_USER = "5/minute"
    clock = Clock(9000 * PERIOD)
    request = anonymous(address="10.0.0.9")  # UserRate counts an anonymous client by address
    for slot in range(9000, 9004):
        clock.now = slot * PERIOD
        assert allowed(UserRate(), request, clock)
    slots = sorted(RateWindow.objects.filter(key__endswith="10.0.0.9").values_list("slot",
                                                                                   flat=True))
    assert slots == [9002, 9003]
    long_key = "k" * 500
    assert RateWindow.add(long_key[:200], 1) == (1, 0)
    throttle = UserRate()
    throttle.get_cache_key = lambda request, view: long_key  # type: ignore[method-assign]
    assert allowed(throttle, request, clock)
    assert RateWindow.objects.filter(key__startswith="sha256:").count() == 1
