"""A person's own API tokens: issue one (shown once) and revoke one, from the console.

Tokens are `ApiKey` rows of the person's principal; only their hash is stored. Each change is
audited on the principal, naming the token by its prefix (never the token itself).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from reconcile_app.errors import Conflict, NotFound
from reconcile_app.limits import reason_length_check
from reconcile_app.models import ApiKey
from reconcile_app.services.audit import audit_record
from reconcile_app.services.principals import api_key_issue, principal_for_user


def token_create(*, user: Any, request_id: str = "") -> tuple[ApiKey, str]:
    """Issue a personal token to `user`; returns its row and the token (never stored)."""
    with transaction.atomic():
        principal = principal_for_user(user)
        token = api_key_issue(principal=principal)
        key = ApiKey.objects.get(principal=principal, prefix=token.split("_", 2)[1])
        audit_record(
            actor=user,
            action="token.create",
            object_kind="principal",
            object_ref=principal.name,
            request_id=request_id,
            after={"prefix": key.prefix},
        )
    return key, token


def token_revoke(*, user: Any, prefix: str, reason: str = "", request_id: str = "") -> ApiKey:
    """Revoke one of `user`'s own tokens. Someone else's token is "not found", never revoked."""
    reason_length_check(reason)
    with transaction.atomic():
        key = (
            ApiKey.objects.select_for_update()
            .select_related("principal")
            .filter(principal__user=user, prefix=prefix)
            .first()
        )
        if key is None:
            raise NotFound(f"you have no token {prefix}", code="token_not_found")
        if key.revoked_at is not None:
            raise Conflict(f"token {prefix} is already revoked", code="token_revoked")
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(
            actor=user,
            action="token.revoke",
            object_kind="principal",
            object_ref=key.principal.name,
            reason=reason,
            request_id=request_id,
            before={"prefix": key.prefix, "revoked": False},
            after={"prefix": key.prefix, "revoked": True},
        )
    return key
