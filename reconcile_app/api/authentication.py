"""`Authorization: Bearer <key>` for agents and for people's personal tokens."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from reconcile_app.security import failure_count, failure_limit, failure_record
from reconcile_app.services.principals import api_key_authenticate


class BearerKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, key = header.partition(" ")
        if keyword != self.keyword:
            return None
        key = key.strip()
        if not key:
            raise exceptions.AuthenticationFailed("empty bearer key")
        address = str(request.META.get("REMOTE_ADDR", "unknown"))
        if failure_count("api-key", address) >= failure_limit("api_key"):
            # Guessing keys from one address is cut off for a while, valid or not.
            raise exceptions.Throttled(detail="too many invalid keys from this address")
        principal = api_key_authenticate(key)
        if principal is None:
            failure_record("api-key", address)
            raise exceptions.AuthenticationFailed("invalid or revoked key")
        return principal.user, principal

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
