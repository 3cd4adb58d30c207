from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

from reconcile_app.choices import Role
from reconcile_app.roles import has_role, is_staff_role, roles_of


class IsOperator(BasePermission):
    message = "operators only"

    def has_permission(self, request: Any, view: Any) -> bool:
        return has_role(request.user, Role.OPERATOR)


class ReadStaffWriteOperator(BasePermission):
    """People in any role read; only operators change anything."""

    message = "this needs the operator role"

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return is_staff_role(request.user)
        return has_role(request.user, Role.OPERATOR)


class AgentOrOperatorWrites(BasePermission):
    """Reads for everyone authenticated; writes by agents and operators, never auditors."""

    message = "auditors are read-only"

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return bool(roles_of(request.user))
        roles = roles_of(request.user)
        return Role.AGENT in roles or Role.OPERATOR in roles
