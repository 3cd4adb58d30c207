"""`client_address`: the one rule for which address a throttle or failure counter counts."""

from __future__ import annotations

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
