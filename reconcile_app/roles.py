"""Who may do what. Roles are Django groups: operator, reviewer, auditor (people), agent."""

from __future__ import annotations

from typing import Any

from reconcile_app.choices import Role

STAFF_ROLES = frozenset({Role.OPERATOR, Role.REVIEWER, Role.AUDITOR})


def roles_of(user: Any) -> frozenset[str]:
    """The user's roles, cached on the user object for the rest of the request."""
    if not getattr(user, "is_authenticated", False):
        return frozenset()
    cached = getattr(user, "_reconcile_roles", None)
    if cached is None:
        cached = frozenset(user.groups.values_list("name", flat=True))
        if user.is_superuser:
            cached |= {Role.OPERATOR, Role.REVIEWER, Role.AUDITOR}
        user._reconcile_roles = cached
    return cached


def roles_forget(user: Any) -> None:
    """Drop the roles cached on the user: the next question reads them again (a write that
    finds access changed while its request ran asks as what the user is now). The superuser
    flag is read again too: it grants every people's role, and the user object is the one
    the request loaded before the change."""
    user.__dict__.pop("_reconcile_roles", None)
    user.refresh_from_db(fields=["is_superuser"])


def is_staff_role(user: Any) -> bool:
    return bool(roles_of(user) & STAFF_ROLES)


def has_role(user: Any, role: str) -> bool:
    return role in roles_of(user)
