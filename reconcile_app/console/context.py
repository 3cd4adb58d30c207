"""Navigation for the console: only sections that exist are listed."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from reconcile_app.roles import roles_of

SECTIONS: list[tuple[str, str]] = [
    ("Snapshots", "console-snapshots"),
    ("Contradictions", "console-contradictions"),
]


def navigation(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    return {
        "nav_sections": SECTIONS,
        "user_roles": sorted(roles_of(user)) if user is not None else [],
    }
