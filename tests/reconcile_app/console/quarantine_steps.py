"""Steps the quarantine page tests take: open the dialog, create, lift, find a row; and a
quarantine already in force (shared fixtures)."""

from __future__ import annotations

import re

import pytest

from reconcile_app.models import Quarantine
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create

# session, user, the user's groups, the history's count and page, the sources, the memory
# classes (one UNION), the active quarantines, the sources' unknown outcomes (one GROUP BY),
# the quarantine timeline.
PAGE_QUERIES = 10
PARTIAL_QUERIES = 5  # the history region only: targets and timeline sit outside it
# session, user, the user's groups, the active quarantine, the source, its unknown outcomes.
ROW_QUERIES = 6

CASE = "case-service"
ROW = "#target-source-case-service"


def new(client, target=CASE, scope="source", htmx=True):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.get(f"/quarantine/new/?scope={scope}&target={target}", **headers)


def create(
    client,
    target=CASE,
    *,
    scope="source",
    reason="Owner reports corrupt exports.",
    confirm=None,
    htmx=True,
    **extra,
):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    data = {
        "scope": scope,
        "target": target,
        "reason": reason,
        "confirm": target if confirm is None else confirm,
        **extra,
    }
    return client.post("/quarantine/new/", data, **headers)


def lift(client, quarantine, reason="Owner fixed the export.", htmx=True):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(
        f"/quarantine/{quarantine.quarantine_id}/lift/", {"reason": reason}, **headers
    )


def row_of(page: str, dom_id: str) -> str:
    match = re.search(rf'<tr [^>]*id="{dom_id}".*?</tr>', page, re.S)
    assert match, f"no row {dom_id}"
    return match.group(0)


@pytest.fixture
def quarantined(estate, operator) -> Quarantine:
    """case-service quarantined by the operator and applied by the worker."""
    quarantine = quarantine_create(
        scope="source", target=CASE, reason="Owner reports corrupt exports.", actor=operator.user
    )
    return quarantine_apply(quarantine_id=quarantine.quarantine_id)
