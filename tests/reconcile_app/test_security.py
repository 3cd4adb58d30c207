"""`client_address`: the one rule for which address a throttle or failure counter counts."""

from __future__ import annotations

import os
import secrets
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import RequestFactory

from reconcile_app.security import PrincipalRateThrottle, client_address

SOCKET = "192.0.2.1"


def request_from(forwarded_for: str | None = None):
    headers: dict[str, Any] = (
        {} if forwarded_for is None else {"HTTP_X_FORWARDED_FOR": forwarded_for}
    )
    return RequestFactory().get("/", REMOTE_ADDR=SOCKET, **headers)


def signed_in():
    """A request from a principal (the throttle counts it by the principal's key)."""
    request = request_from()
    request.user = SimpleNamespace(is_authenticated=True, pk=7)
    return request


@pytest.mark.parametrize(
    ("trusted_proxies", "forwarded_for", "address"),
    [
        (0, None, SOCKET),
        (0, "198.51.100.7", SOCKET),
        (0, "198.51.100.7, 203.0.113.5", SOCKET),
        (1, None, SOCKET),
        (1, "198.51.100.7", "198.51.100.7"),
        (1, "198.51.100.7, 203.0.113.5", "203.0.113.5"),
        (1, "198.51.100.7,203.0.113.5 ", "203.0.113.5"),
        (2, "198.51.100.7, 203.0.113.5", "198.51.100.7"),
        (2, "10.0.0.1, 198.51.100.7, 203.0.113.5", "198.51.100.7"),
        (3, "198.51.100.7, 203.0.113.5", "198.51.100.7"),
        (1, "198.51.100.7, ", SOCKET),
    ],
    ids=[
        "no-proxy-no-header",
        "no-proxy-forged-header-ignored",
        "no-proxy-forged-chain-ignored",
        "one-proxy-no-header",
        "one-proxy-one-hop",
        "one-proxy-last-hop",
        "one-proxy-spacing",
        "two-proxies-second-from-right",
        "two-proxies-ignore-what-the-client-wrote",
        "more-proxies-than-hops-leftmost",
        "empty-hop-falls-back-to-socket",
    ],
)
def test_client_address_follows_the_trusted_proxy_count(
    settings, trusted_proxies, forwarded_for, address
):
    settings.RECONCILE_TRUSTED_PROXY_COUNT = trusted_proxies

    assert client_address(request_from(forwarded_for)) == address


def test_rate_limits_count_anonymous_callers_on_the_same_address(settings):
    settings.RECONCILE_TRUSTED_PROXY_COUNT = 0

    ident = PrincipalRateThrottle().get_ident(request_from("198.51.100.7"))

    assert ident == SOCKET


class Clock:
    """A throttle timer the test moves by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


REDIS_BROKER = os.environ.get("CELERY_BROKER_URL", "")


@pytest.fixture(params=["locmem", "file", "redis"])
def throttle_at(request, monkeypatch, settings, tmp_path):
    """A throttle on each kind of cache a deployment may share (tests otherwise use locmem)."""
    from django.core.cache import cache

    from config.cache import cache_url_from_broker

    if request.param == "file":
        backend = {"BACKEND": "config.file_cache.FileCache"}
        settings.CACHES = {"default": {**backend, "LOCATION": str(tmp_path)}}
    elif request.param == "redis":
        if not REDIS_BROKER.startswith("redis"):
            pytest.skip("needs the services mode's Redis (CELERY_BROKER_URL)")
        location = cache_url_from_broker(REDIS_BROKER)
        prefix = f"test-{secrets.token_hex(4)}"
        settings.CACHES = {
            "default": {
                "BACKEND": "config.cache.RedisCache",
                "LOCATION": location,
                "KEY_PREFIX": prefix,
            }
        }
    if request.param != "redis":
        cache.clear()  # a private prefix keeps Redis counters apart; they expire by themselves

    def make(rate: str, clock: Clock) -> PrincipalRateThrottle:
        monkeypatch.setattr(PrincipalRateThrottle, "rate", rate, raising=False)
        monkeypatch.setattr(PrincipalRateThrottle, "timer", clock)
        return PrincipalRateThrottle()

    yield make
    if request.param != "redis":
        cache.clear()


def _stored_values(throttle: PrincipalRateThrottle) -> list[Any]:
    from django.core.cache import cache

    key = throttle.get_cache_key(signed_in(), None)
    window = int(throttle.timer() // throttle.duration)
    return [cache.get(f"{key}:{number}") for number in (window - 1, window)]


def test_the_limit_holds_exactly_at_the_rate_and_costs_the_same_at_any_count(throttle_at):
    clock = Clock(600.0)  # the start of a window
    throttle = throttle_at("5/min", clock)

    admitted = [throttle.allow_request(signed_in(), None) for _ in range(5)]
    refused = [throttle.allow_request(signed_in(), None) for _ in range(500)]

    assert admitted == [True] * 5
    assert not any(refused)
    # One int per window, whatever the number of requests made: refusals are not counted.
    assert _stored_values(throttle) == [None, 5]
    assert throttle.wait() == pytest.approx(60 + 60 * (1 - 4 / 5))


def test_the_previous_window_fades_out_as_the_sliding_window_moves(throttle_at):
    clock = Clock(600.0)
    throttle = throttle_at("4/min", clock)
    assert all(throttle.allow_request(signed_in(), None) for _ in range(4))

    clock.now = 660.0 + 15  # a quarter into the next window: 4 * 0.75 = 3 still count
    assert throttle.allow_request(signed_in(), None)
    assert not throttle.allow_request(signed_in(), None)
    # One more fits once 4 * (1 - f) + 1 + 1 <= 4, at f = 1/2: 15 seconds from now.
    assert throttle.wait() == pytest.approx(15)

    clock.now = 660.0 + 30
    assert throttle.allow_request(signed_in(), None)
    assert _stored_values(throttle) == [4, 2]


def test_a_window_without_the_previous_ones_requests_admits_the_full_rate(throttle_at):
    clock = Clock(600.0)
    throttle = throttle_at("3/min", clock)
    assert all(throttle.allow_request(signed_in(), None) for _ in range(3))

    clock.now = 600.0 + 120  # two windows on: nothing left to weigh
    assert [throttle.allow_request(signed_in(), None) for _ in range(4)] == [
        True,
        True,
        True,
        False,
    ]


def test_a_refusal_keeps_a_long_windows_count_on_the_file_cache(settings, tmp_path, monkeypatch):
    """The file cache's incr and decr store with its default timeout (300 s): a refusal's
    undo must not shorten an hour's window to five minutes and hand out a fresh quota."""
    import time

    from django.core.cache import cache

    backend = {"BACKEND": "config.file_cache.FileCache"}
    settings.CACHES = {"default": {**backend, "LOCATION": str(tmp_path)}}
    clock = Clock(3600.0 * 10)
    monkeypatch.setattr(PrincipalRateThrottle, "rate", "3/hour", raising=False)
    monkeypatch.setattr(PrincipalRateThrottle, "timer", clock)
    file_clock = [1_000_000.0]  # the file cache's expiry clock
    monkeypatch.setattr(time, "time", lambda: file_clock[0])
    throttle = PrincipalRateThrottle()
    assert all(throttle.allow_request(signed_in(), None) for _ in range(3))
    assert not throttle.allow_request(signed_in(), None)

    file_clock[0] += 301
    clock.now += 301
    assert not PrincipalRateThrottle().allow_request(signed_in(), None)
    assert cache.get(f"{throttle.get_cache_key(signed_in(), None)}:10") == 3


def test_callers_without_credentials_count_per_address_at_the_anonymous_rate(
    throttle_at, monkeypatch
):
    rates = {**PrincipalRateThrottle.THROTTLE_RATES, "anon": "2/min", "principal": "5/min"}
    monkeypatch.setattr(PrincipalRateThrottle, "THROTTLE_RATES", rates)
    throttle = throttle_at("5/min", Clock(600.0))

    anonymous = [throttle.allow_request(request_from(), None) for _ in range(3)]
    principal = [throttle.allow_request(signed_in(), None) for _ in range(5)]

    assert anonymous == [True, True, False]
    assert all(principal)  # counted apart, at the principal's rate
    assert not throttle.allow_request(signed_in(), None)
