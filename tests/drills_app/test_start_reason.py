"""Starting a drill or the drift benchmark takes a reason: drills inject faults into their
sources and load the machine, so who started one, and why, is on the audit trail, as for every
other operator action (it used to record who and when only)."""

from __future__ import annotations

import getpass
import re
from io import StringIO

import pytest
from django.core.management import call_command

from drills_app import poisoned
from drills_app.choices import DrillRunKind
from drills_app.models import DrillRun
from drills_app.runs import drill_run_enqueue
from reconcile_app.errors import ValidationFailed
from reconcile_app.models import AuditEvent
from tests.drills_app.test_views import DRILL_POST

WHY = "Rehearsing the replica failover before Friday's change (OPS-230)"


def test_the_start_and_its_reason_are_on_the_audit_trail(operator, operator_browser):
    run_id = operator_browser.post("/drills/", DRILL_POST)["Location"].split("/")[-2]
    row = AuditEvent.objects.get(action="drill.start")
    assert (row.actor, row.object_ref) == (operator.user, run_id)
    assert row.reason == "After the owner's upgrade"


@pytest.mark.parametrize("reason", [None, "", "   ", "\u200b"])
def test_a_start_without_a_reason_is_refused_beside_the_field(operator_browser, reason):
    data = {key: value for key, value in DRILL_POST.items() if key != "reason"}
    if reason is not None:
        data["reason"] = reason
    response = operator_browser.post("/drills/", data)
    html = response.content.decode()
    assert response.status_code == 400
    assert re.search(r'start-reason has-error">.*?This field is required', html, re.S)
    assert 'name="repeat" value="2"' in html, "the operator's input is kept"
    assert DrillRun.objects.count() == 0
    assert not AuditEvent.objects.filter(action="drill.start").exists()


@pytest.mark.parametrize("reason", ["", "  ", "\u200b\u200d"])
def test_a_run_is_not_started_without_a_reason(operator, reason):
    with pytest.raises(ValidationFailed) as refused:
        drill_run_enqueue(
            kind=DrillRunKind.DRILL,
            parameters={"repeat": 1},
            reason=reason,
            started_by=operator.user,
        )
    assert refused.value.code == "reason_required"
    assert not DrillRun.objects.exists()
    assert not AuditEvent.objects.filter(action="drill.start").exists()


def test_a_drill_run_from_the_command_line_names_who_ran_it_and_leads_to_what_it_did(
    db, monkeypatch
):
    # `manage.py drill` wrote its quarantine, its lift and what it closed as the system, with
    # no request id and no drill.start row: nothing on the trail said who had run it.
    monkeypatch.setattr(getpass, "getuser", lambda: "ops-oncall")

    call_command(
        "drill", "--repeat", "1", "--scenario", poisoned.NAME, "--reason", WHY, stdout=StringIO()
    )

    start = AuditEvent.objects.get(action="drill.start")
    assert (start.actor_name, start.reason) == ("drill (ops-oncall)", WHY)
    assert start.object_ref == str(DrillRun.objects.get().pk) and start.request_id
    done = AuditEvent.objects.filter(pk__gt=start.pk)  # its world's set-up, then the trials'
    assert {row.action for row in done} >= {"quarantine.create", "quarantine.lift"}
    assert {row.request_id for row in done} == {start.request_id}
