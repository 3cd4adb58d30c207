"""Taking a person's access back: every personal token revoked, the account disabled (its
console sessions ended) or enabled again; from the command line (`manage.py user_access`),
as `agent_access` does for agents. Before it, only a person could revoke their own tokens,
and offboarding a reviewer took the Django shell, unaudited.

Each change moves the configuration epoch (triggers on the keys' and users' tables), so the
copy of a token's user that every process keeps is read again on its next request.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import PrincipalKind
from reconcile_app.errors import NotFound
from reconcile_app.models import Principal
from reconcile_app.services.agent_access import access_reason_check
from reconcile_app.services.audit import audit_record
from reconcile_app.services.principals import api_keys_revoke


def _person(username: str) -> Any:
    """The person's account, locked for the change; an agent's account is not a person's
    (agent_access takes an agent's access back)."""
    user = (
        get_user_model()
        .objects.select_for_update(no_key=True, of=("self",))
        .filter(username=username)
        .exclude(principal__kind=PrincipalKind.AGENT)
        .first()
    )
    if user is None:
        raise NotFound(f"no person named {username!r}", code="user_not_found")
    return user


def _tokens_revoked(user: Any) -> list[str]:
    # A superuser made in the shell may have no principal yet, so no token either.
    principal = Principal.objects.filter(user=user).first()
    return [] if principal is None else api_keys_revoke(principal=principal)


def _sessions_ended(user: Any) -> int:
    """Delete the person's console sessions. Disabled, a session is refused already; deleted,
    it cannot come back when the account is enabled again. Sessions name their user only
    inside their data, so the live ones are read (a command, not a request)."""
    ended = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk)
    ]
    Session.objects.filter(pk__in=ended).delete()
    return len(ended)


def person_tokens_revoke(*, username: str, reason: str, actor: Any) -> list[str]:
    """Revoke every personal token of the person (console sign-in stays); returns their
    prefixes."""
    access_reason_check(reason)
    with transaction.atomic():
        user = _person(username)
        revoked = _tokens_revoked(user)
        audit_record(
            actor=actor,
            action="user.tokens_revoke",
            object_kind="user",
            object_ref=username,
            reason=reason,
            before={"tokens": revoked},
            after={"tokens": []},
        )
    return revoked


def person_enabled_set(*, username: str, enabled: bool, reason: str, actor: Any) -> Any:
    """Disable the person (no sign-in, no token, every session ended) or enable them again
    (to sign in; tokens revoked stay revoked: they make new ones in the console)."""
    access_reason_check(reason)
    with transaction.atomic():
        user = _person(username)
        was_enabled = user.is_active
        user.is_active = enabled
        user.save(update_fields=["is_active"])
        revoked = [] if enabled else _tokens_revoked(user)
        sessions = 0 if enabled else _sessions_ended(user)
        audit_record(
            actor=actor,
            action="user.enable" if enabled else "user.disable",
            object_kind="user",
            object_ref=username,
            reason=reason,
            before={"enabled": was_enabled},
            after={"enabled": enabled, "tokens_revoked": revoked, "sessions_ended": sessions},
        )
    return user


def sessions_expired_clear() -> int:
    """Delete console sessions past their expiry; returns how many. Django never deletes them
    by itself (its `clearsessions` is left to the deployer), so every sign-in would leave a
    row for as long as the deployment runs; the scheduler calls this (config/schedule.py)."""
    deleted, _ = Session.objects.filter(expire_date__lt=timezone.now()).delete()
    return deleted
