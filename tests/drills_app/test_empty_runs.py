"""The drills page with no run yet, for people who may not start one (reviewers, auditors)."""

from __future__ import annotations

import pytest

from tests.reconcile_app.console.conftest import signed_in


@pytest.mark.parametrize("persona", ["reviewer", "auditor"])
def test_an_empty_run_list_sends_no_one_to_a_form_they_are_not_shown(request, persona, db):
    html = signed_in(request.getfixturevalue(persona)).get("/drills/").content.decode()
    assert "No run yet" in html
    assert "above" not in html.split("No run yet", 1)[1].split("<", 1)[0]
