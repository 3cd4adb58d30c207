"""Who may call what (docs/api.md "Authentication and roles", "Who reads what").

Refusals say why with a stable code: an agent asking for what is for people gets
`people_only`; a person whose role may not gets `forbidden`. Anonymous callers are left to
DRF, which answers 401.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

from reconcile_app.choices import Role
from reconcile_app.errors import Forbidden
from reconcile_app.roles import has_role, is_staff_role, roles_of


def _people_only(request: Any) -> None:
    """Raise `people_only` for an authenticated caller in no people's role (an agent)."""
    if not is_staff_role(request.user):
        raise Forbidden("this is for people in a role, not for agents", code="people_only")


def role_required(request: Any, role: str, what: str) -> bool:
    """True for a person in `role`; `people_only` for an agent, `forbidden` for another role."""
    if not request.user or not request.user.is_authenticated:
        return False
    _people_only(request)
    if not has_role(request.user, role):
        raise Forbidden(f"{what} needs the {role} role", code="forbidden")
    return True


class PeopleOnly(BasePermission):
    """Any person in a role reads and acts; agents are refused (`people_only`)."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if not request.user or not request.user.is_authenticated:
            return False
        _people_only(request)
        return True


class IsOperator(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return role_required(request, Role.OPERATOR, "this")


class IsReviewer(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return role_required(request, Role.REVIEWER, "deciding escalations")


class ReadStaffWriteOperator(BasePermission):
    """People in any role read; only operators change anything; agents neither."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return PeopleOnly().has_permission(request, view)
        return role_required(request, Role.OPERATOR, "this change")


class AgentOrOperatorWrites(BasePermission):
    """Reads for everyone authenticated (scoped by the view); writes by agents and operators,
    never by reviewers or auditors."""

    message = "auditors and reviewers are read-only here"

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return bool(roles_of(request.user))
        roles = roles_of(request.user)
        return Role.AGENT in roles or Role.OPERATOR in roles
