"""What a principal may do beyond reconciling: attest a source's evidence, write fact keys.

Capabilities are stored as `(kind, name)` pairs: `DECISION_CLASS:ACTION` for decisions,
`attest:SOURCE` and `fact:PATTERN` for the ledger and the fact keys (docs/api.md "Authentication
and roles"). Operators may attest any source and write any fact; the services that let them
record an audit row when they do.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from reconcile_app.choices import Role
from reconcile_app.models import Principal
from reconcile_app.roles import has_role, is_staff_role

ATTEST = "attest"
FACT = "fact"


def principal_is_operator(principal: Principal) -> bool:
    return has_role(principal.user, Role.OPERATOR)


def principal_is_person(principal: Principal) -> bool:
    """A person in a role (operator, reviewer, auditor), as opposed to an agent."""
    return is_staff_role(principal.user)


def may_attest(principal: Principal, source: str) -> bool:
    return (
        principal_is_operator(principal)
        or principal.capabilities.filter(decision_class=ATTEST, action=source).exists()
    )


def fact_patterns(principal: Principal) -> list[str]:
    return list(principal.capabilities.filter(decision_class=FACT).values_list("action", flat=True))


def may_write_fact(principal: Principal, fact_key: str) -> bool:
    if principal_is_operator(principal):
        return True
    return any(fnmatchcase(fact_key, pattern) for pattern in fact_patterns(principal))
