"""`bench reconcile`: figures for the service and the endpoint, and with --profile where an
endpoint call's time goes."""

from __future__ import annotations

import io
import re
import time
from typing import Self

import pytest
from django.test.utils import CaptureQueriesContext

from drills_app.bench import reconcile


@pytest.mark.django_db
def test_the_profile_names_the_gates_own_functions():
    out = io.StringIO()
    reconcile.run(out, 2, profile=True, past_decisions=3)
    text = out.getvalue()

    assert "3 decisions issued before)" in text
    assert "API endpoint, 1 claim(s)" in text
    assert "query count vs claims: constant" in text
    assert "ms of it CPU" in text
    # The profile is of the endpoint: the protocol's steps appear under their own names.
    assert "snapshot_issue" in text
    assert "read_fields" in text


class _CountedAfterASecond(CaptureQueriesContext):
    """The count phase starting more than a second after the estate was made, as it does on
    a loaded machine."""

    def __enter__(self) -> Self:
        time.sleep(1.1)
        return super().__enter__()


@pytest.mark.django_db
def test_the_query_counts_compare_the_same_claims_however_slow_the_run(monkeypatch):
    # The claims' ages were measured from each call: past a second after the estate was made,
    # claims written 4 hours back turned from superseded to contradicted, and 100 claims cost
    # one query more than 1 and 10 (seen under load in a full `./dev test`).
    monkeypatch.setattr(reconcile, "CaptureQueriesContext", _CountedAfterASecond)
    out = io.StringIO()
    reconcile.run(out, 1)
    text = out.getvalue()

    counts = re.findall(r"(\d+) claim\(s\): (\d+) queries", text)
    assert [claims for claims, _ in counts] == ["1", "10", "100"]
    assert len({queries for _, queries in counts}) == 1, text
    assert "query count vs claims: constant" in text
