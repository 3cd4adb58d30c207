"""Granting access says why, as taking it back does: `create_principal` and `create_user`
take `--reason R` onto their audit rows (they wrote who and when, never why: the rows'
reason was always blank, while `agent_access` and `user_access` require one)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import AuditEvent, Principal

WHY = "Collections pilot, approved in CAB-2031"
AGENT = ("create_principal", "pilot-agent", "--capability", "attest:case-service")
PERSON = ("create_user", "pat", "--group", "reviewer")


@pytest.mark.parametrize(
    ("command", "action"), [(AGENT, "principal.create"), (PERSON, "user.create")]
)
def test_the_reason_for_the_access_is_on_its_audit_row(db, command, action):
    call_command(*command, "--reason", f"  {WHY} ", stdout=StringIO(), stderr=StringIO())

    row = AuditEvent.objects.get(action=action, object_ref=command[1])
    assert row.reason == WHY


@pytest.mark.parametrize("command", [AGENT, PERSON])
@pytest.mark.parametrize("reason", ["\u200b\u3164", "x" * 4001])
def test_a_reason_that_says_nothing_or_too_much_grants_nothing(db, command, reason):
    with pytest.raises(CommandError, match="reason"):
        call_command(*command, "--reason", reason, stdout=StringIO(), stderr=StringIO())

    assert not User.objects.filter(username=command[1]).exists()
    assert not Principal.objects.filter(name=command[1]).exists()
    assert not AuditEvent.objects.filter(object_ref=command[1]).exists()
