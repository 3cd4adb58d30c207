"""Taking an agent's access back: its key rotated, a capability withdrawn, the agent disabled.

Each change moves the configuration epoch (a trigger on the keys', principals' and
capabilities' tables), so every process's cached copy is read again on its next request: a
revoked key stops opening the API at once, on every machine, and a snapshot issued under a
capability withdrawn since commits nothing (the gate checks capabilities at commit too).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import PrincipalKind
from reconcile_app.errors import NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import Principal
from reconcile_app.services.audit import audit_record
from reconcile_app.services.principals import api_key_issue, api_keys_revoke, parse_capability


def _agent(name: str) -> Principal:
    # FOR NO KEY UPDATE: it serialises changes to the agent's access as FOR UPDATE did, but
    # lets a commit of the agent's effect check its foreign key (FOR KEY SHARE). That commit
    # holds the epochs from its start (services/effects/gate.authorisation_held), which the
    # change then moves: with FOR UPDATE each waited on the other (PostgreSQL: deadlock
    # detected, the commit a 503).
    principal = (
        Principal.objects.select_for_update(no_key=True)
        .filter(name=name, kind=PrincipalKind.AGENT)
        .first()
    )
    if principal is None:
        raise NotFound(f"no agent principal named {name!r}", code="principal_not_found")
    return principal


def access_reason_check(reason: str) -> None:
    """Taking anyone's access back says why (agents here, people in person_access)."""
    if says_nothing(reason):
        raise ValidationFailed("taking access back needs a reason", code="reason_required")


def agent_key_rotate(*, name: str, reason: str, actor: Any) -> str:
    """Revoke every key the agent holds and issue one new key (returned, shown once)."""
    access_reason_check(reason)
    with transaction.atomic():
        principal = _agent(name)
        revoked = api_keys_revoke(principal=principal)
        key = api_key_issue(principal=principal)
        audit_record(
            actor=actor,
            action="principal.key_rotate",
            object_kind="principal",
            object_ref=name,
            reason=reason,
            before={"keys": revoked},
            after={"keys": [key.split("_", 2)[1]], "revoked": revoked},
        )
    return key


def agent_enabled_set(*, name: str, enabled: bool, reason: str, actor: Any) -> Principal:
    """Disable the agent (no key of its opens the API) or enable it again."""
    access_reason_check(reason)
    with transaction.atomic():
        principal = _agent(name)
        was_enabled = principal.disabled_at is None
        principal.disabled_at = None if enabled else timezone.now()
        principal.save(update_fields=["disabled_at"])
        audit_record(
            actor=actor,
            action="principal.enable" if enabled else "principal.disable",
            object_kind="principal",
            object_ref=name,
            reason=reason,
            before={"enabled": was_enabled},
            after={"enabled": enabled},
        )
    return principal


def _held_form(text: str) -> tuple[str, str]:
    if text.endswith(":*"):
        return text[:-2], "*"
    return parse_capability(text)


def capabilities_revoke(
    *, name: str, capabilities: list[str], reason: str, actor: Any
) -> list[str]:
    """Withdraw capabilities the agent holds; naming one it does not hold is refused (400
    `capability_not_held`), so a typo is not taken for a withdrawal."""
    access_reason_check(reason)
    # As held, not as a grant is checked: a `*` granted before wildcards were refused must
    # be removable too.
    parsed = list(dict.fromkeys(_held_form(text) for text in capabilities))
    with transaction.atomic():
        principal = _agent(name)
        held = {(c.decision_class, c.action): c for c in principal.capabilities.all()}
        missing = [f"{dc}:{action}" for dc, action in parsed if (dc, action) not in held]
        if missing:
            raise ValidationFailed(
                f"{name} does not hold {', '.join(missing)}", code="capability_not_held"
            )
        for pair in parsed:
            held[pair].delete()
        removed = [f"{dc}:{action}" for dc, action in parsed]
        audit_record(
            actor=actor,
            action="principal.revoke",
            object_kind="principal",
            object_ref=name,
            reason=reason,
            after={"removed": removed},
        )
    return removed
