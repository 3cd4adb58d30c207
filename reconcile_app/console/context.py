"""Navigation for the console: only sections that exist are listed.

A later page adds its section here with the URL names that belong to it, so its detail pages
highlight the right entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from reconcile_app.roles import roles_of


@dataclass(frozen=True)
class NavSection:
    label: str
    url_name: str
    also_active_on: tuple[str, ...] = ()
    # `g` then this letter opens the section (console.js; listed in the shortcuts dialog).
    key: str = ""


SECTIONS: list[NavSection] = [
    NavSection("Overview", "console-home", key="o"),
    NavSection("Snapshots", "console-snapshots", ("console-snapshot",), key="s"),
    NavSection("Contradictions", "console-contradictions", key="c"),
    NavSection("Escalations", "console-escalations", ("console-escalation",), key="e"),
    # Beside escalations: the reviewers' other queue, suggested memories awaiting promotion.
    NavSection("Promotions", "console-promotions", key="p"),
    NavSection("Unknown outcomes", "console-effects", ("console-effect",), key="u"),
    NavSection("Facts", "console-facts", ("console-fact",), key="f"),
    NavSection("Memory", "console-memory-classes", ("console-memory",), key="m"),
    NavSection(
        "Contracts",
        "console-contracts",
        (
            "console-contract",
            "console-contract-diff",
            "console-contract-activate",
            "console-contract-release",
        ),
        key="k",
    ),
    NavSection(
        "Lineage",
        "console-lineage",
        ("console-blast-radius", "console-correction", "console-evidence"),
        key="l",
    ),
    NavSection(
        "Quarantine",
        "console-quarantine",
        ("console-quarantine-new", "console-quarantine-lift"),
        key="q",
    ),
    NavSection("Drills", "console-drills", ("console-drill", "console-drill-compare"), key="d"),
    NavSection("Audit", "console-audit", key="a"),
]


def navigation(request: HttpRequest) -> dict[str, Any]:
    match = getattr(request, "resolver_match", None)
    current = match.url_name if match is not None else None
    user = getattr(request, "user", None)
    return {
        "nav_sections": [
            {
                "label": section.label,
                "url": reverse(section.url_name),
                "active": current in (section.url_name, *section.also_active_on),
                "key": section.key,
            }
            for section in SECTIONS
        ],
        # Lazy: the groups query runs only on pages that show the roles.
        "user_roles": SimpleLazyObject(lambda: sorted(roles_of(user)) if user is not None else []),
    }
