"""create_principal and create_user: a key or token printed once, only its hash stored."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from reconcile_app.management.command_runner import command_runner
from reconcile_app.models import (
    ApiKey,
    AuditEvent,
    Capability,
    Principal,
)


def lines_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_create_principal_prints_the_key_alone_and_stores_only_a_hash(estate):
    out, err = StringIO(), StringIO()
    call_command(
        "create_principal",
        "ops-bot",
        "--capability",
        "collections-contact-release:retain_manual_review",
        "--capability",
        "warehouse-pick:pick_pallet",
        stdout=out,
        stderr=err,
    )

    key = lines_of(out.getvalue())[-1]
    assert key == key.strip() and " " not in key and len(key) >= 32
    principal = Principal.objects.get(name="ops-bot")
    stored = ApiKey.objects.get(principal=principal)
    assert stored.key_hash != key
    assert key not in {stored.key_hash, stored.prefix}
    assert key not in err.getvalue()
    assert sorted(str(c) for c in Capability.objects.filter(principal=principal)) == [
        "collections-contact-release:retain_manual_review",
        "warehouse-pick:pick_pallet",
    ]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/api/v1/snapshots").status_code == 200
    response = client.post(
        "/api/v1/reconcile",
        {
            "subject": "account-17",
            "purpose": "collections",
            "decision_class": "collections-contact-release",
            "proposed_action": "release_collections_hold",
        },
        format="json",
    )
    assert response.status_code == 403
    assert response.json()["code"] == "capability_missing"


def test_create_principal_refuses_a_malformed_capability(db):
    with pytest.raises(CommandError):
        call_command(
            "create_principal",
            "bad-bot",
            "--capability",
            "no-colon-here",
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert not Principal.objects.filter(name="bad-bot").exists()


def test_create_principal_refuses_a_taken_name(db, agent):
    with pytest.raises(CommandError):
        call_command("create_principal", agent.name, stdout=StringIO(), stderr=StringIO())


def test_create_user_token_acts_as_that_person_in_that_role(estate, agent):
    out = StringIO()
    call_command(
        "create_user",
        "oscar",
        "--group",
        "operator",
        "--password",
        "pw-123456789",
        stdout=out,
        stderr=StringIO(),
    )

    token = lines_of(out.getvalue())[-1]
    user = User.objects.get(username="oscar")
    assert list(user.groups.values_list("name", flat=True)) == ["operator"]
    assert ApiKey.objects.get(principal__user=user).key_hash != token
    person = APIClient()
    person.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert person.get("/api/v1/contradictions").status_code == 200
    assert (
        person.put(
            "/api/v1/sandbox/case-service/records/a-1/collections_status",
            {"value": "hold"},
            format="json",
        ).status_code
        == 200
    )
    assert agent.client.get("/api/v1/contradictions").status_code == 403
    assert APIClient().login(username="oscar", password="pw-123456789")


def test_create_user_as_auditor_is_read_only(estate):
    out = StringIO()
    call_command("create_user", "audrey", "--group", "auditor", stdout=out, stderr=StringIO())
    auditor = APIClient()
    auditor.credentials(HTTP_AUTHORIZATION=f"Bearer {lines_of(out.getvalue())[-1]}")
    assert auditor.get("/api/v1/contradictions").status_code == 200
    assert (
        auditor.post("/api/v1/contradictions/1/resolve", {"note": "x"}, format="json").status_code
        == 403
    )


def test_create_user_refuses_an_unknown_group(db):
    with pytest.raises(CommandError):
        call_command(
            "create_user", "mallory", "--group", "superhero", stdout=StringIO(), stderr=StringIO()
        )
    assert not User.objects.filter(username="mallory").exists()


def test_create_principal_help_names_every_kind_of_capability():
    # The help said DECISION_CLASS:ACTION alone, so a deployer reading it would never learn
    # that attest:SOURCE and fact:PATTERN are given the same way (README, docs/api.md).
    from reconcile_app.management.commands.create_principal import Command

    help_text = Command().create_parser("manage.py", "create_principal").format_help()

    for capability in ("DECISION_CLASS:ACTION", "attest:SOURCE", "fact:PATTERN"):
        assert capability in help_text


@pytest.mark.parametrize(
    ("command", "args", "action"),
    [
        ("create_principal", ["--capability", "attest:case-ledger"], "principal.create"),
        ("create_user", ["--group", "operator"], "user.create"),
    ],
)
def test_who_created_an_identity_is_audited(db, command, args, action):
    """Granting access is an administrator's action: its audit row names the command and
    the account that ran it, as agent_access does, not an anonymous "system"."""
    call_command(command, "granted", *args, stdout=StringIO(), stderr=StringIO())

    event = AuditEvent.objects.get(action=action, object_ref="granted")
    assert event.actor_name.startswith(f"{command} (")


def test_an_account_name_too_long_for_the_audit_row_is_cut_not_refused(monkeypatch):
    """`getpass` reads LOGNAME/USER first, which can say anything: an actor past the audit
    row's 150 characters made the command fail (PostgreSQL: value too long) after the
    identity was validated, granting nothing."""
    monkeypatch.setattr("getpass.getuser", lambda: "a" * 300)
    limit = AuditEvent._meta.get_field("actor_name").max_length

    actor = command_runner("create_principal").username

    assert len(actor) <= limit
    assert actor.startswith("create_principal (aaa") and actor.endswith("…)")
