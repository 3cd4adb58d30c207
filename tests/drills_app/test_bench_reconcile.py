"""`bench reconcile`: figures for the service and the endpoint, and with --profile where an
endpoint call's time goes."""

from __future__ import annotations

import io

import pytest

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
