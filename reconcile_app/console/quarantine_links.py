"""Where each of a quarantine's "affected" counts is listed, so a count is a link.

A source's snapshots and allowed decisions are the snapshot list filtered by that source from
the quarantine's `since` (the same window the count used), and so are its effects; its pending
effects (of any age, in three statuses no one tab shows) are its effects filtered `pending`.
What descends from a memory class or record (memories, claims, downstream
snapshots, decisions, effects) is its blast radius, on the tab of that kind.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlencode

from django.urls import reverse

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import QuarantineScope
from reconcile_app.console.node_links import blast_url

DOWNSTREAM = "downstream_"


def affected_url(*, scope: str, target: str, name: str, since: datetime | None) -> str | None:
    """The list a count named `name` counts, or None when no page lists exactly those."""
    if scope == QuarantineScope.SOURCE:
        window = {"issued_after": rfc3339(since) or ""} if since else {}
        if name == "snapshots":
            return _url("console-snapshots", source=target, **window)
        if name == "decisions":
            return _url("console-snapshots", source=target, result="allow", **window)
        if name == "effects":
            created = {"created_after": rfc3339(since) or ""} if since else {}
            return _url("console-effects", status="all", source=target, **created)
        if name == "effects_pending":
            return _url("console-effects", status="all", source=target, pending="true")
        return None
    if scope == QuarantineScope.MEMORY_CLASS:
        entry = {"memory_class": target}
    elif scope == QuarantineScope.MEMORY:
        entry = {"node": f"memory:{target}"}
    else:
        return None
    if name.startswith(DOWNSTREAM):
        return blast_url(**entry, kind=name.removeprefix(DOWNSTREAM))
    if name in ("memories", "memories_current", "claims"):
        return blast_url(**entry)
    return None


def _url(name: str, **query: str) -> str:
    return f"{reverse(name)}?{urlencode(query)}"
