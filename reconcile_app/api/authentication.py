"""`Authorization: Bearer <key>` for agents and for people's personal tokens."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from config.logs import principal_var
from reconcile_app.security import (
    FAILURE_WINDOW_SECONDS,
    client_address,
    failure_limit,
    failure_record,
)
from reconcile_app.services.principals import api_key_authenticate


def bearer_credentials(request: Request) -> str | None:
    """What `Authorization: Bearer <credentials>` presents, stripped ("" when nothing); None
    without a bearer header. The scheme's name is case-insensitive (RFC 9110, 11.1)."""
    header = authentication.get_authorization_header(request).decode("latin-1")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credentials.strip()


class BearerKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        key = bearer_credentials(request)
        if key is None:
            return None
        if not key:
            raise exceptions.AuthenticationFailed("empty bearer key")
        # The key is checked before any failure count: many agents share one address behind
        # a proxy or NAT, and someone else's bad guesses must never lock a valid key out. A
        # guess costs an indexed prefix lookup and a SHA-256, so checking it first is cheap.
        principal = api_key_authenticate(key)
        if principal is not None:
            principal_var.set(principal.name)  # this request's log lines name the agent
            return principal.user, principal
        failures = failure_record("api-key", client_address(request))
        if failures > failure_limit("api_key"):
            # Tells a guesser to stop (and well-behaved clients when to retry); every
            # guess restarts the window, so guessing on only prolongs the refusal.
            raise exceptions.Throttled(
                wait=FAILURE_WINDOW_SECONDS, detail="too many invalid keys from this address."
            )
        raise exceptions.AuthenticationFailed("invalid or revoked key")

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
