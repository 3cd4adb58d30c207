"""user_access: a person's tokens revoked, the person disabled (sessions ended) or enabled
again, each at once (the configuration epoch) and audited with who and why. Before it,
offboarding a reviewer took the Django shell."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from reconcile_app.models import AuditEvent
from reconcile_app.services.tokens import token_create
from tests.conftest import make_agent, make_person

PASSWORD = "correct-horse-battery"


def run(*args: str) -> str:
    out = StringIO()
    call_command("user_access", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def me(key: str) -> int:
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {key}").get("/api/v1/me").status_code


def signed_in(username: str) -> Client:
    browser = Client()
    assert browser.login(username=username, password=PASSWORD)
    assert browser.get("/").status_code == 200
    return browser


def test_revoking_a_persons_tokens_closes_the_api_and_keeps_the_console(db):
    person = make_person("rhea-reviewer", "reviewer")
    _, second = token_create(user=person.user)
    browser = signed_in("rhea-reviewer")

    said = run("revoke-tokens", "rhea-reviewer", "--reason", "token pasted in a chat")

    assert said == "rhea-reviewer: 2 token(s) revoked"
    assert (me(person.key), me(second)) == (401, 401)
    assert browser.get("/").status_code == 200
    event = AuditEvent.objects.get(action="user.tokens_revoke")
    assert event.reason == "token pasted in a chat"
    assert event.actor_name.startswith("user_access (")
    assert len(event.before["tokens"]) == 2


def test_a_disabled_person_signs_in_nowhere_and_stays_out_when_enabled_again(db):
    person = make_person("otto-operator", "operator")
    browser = signed_in("otto-operator")

    run("disable", "otto-operator", "--reason", "left the company")

    assert me(person.key) == 401
    assert browser.get("/").status_code == 302  # to sign-in
    assert not Client().login(username="otto-operator", password=PASSWORD)
    event = AuditEvent.objects.get(action="user.disable")
    assert event.after["sessions_ended"] == 1 and len(event.after["tokens_revoked"]) == 1

    run("enable", "otto-operator", "--reason", "rehired")
    # The old session and token were ended, not suspended: neither opens anything again.
    assert browser.get("/").status_code == 302
    assert me(person.key) == 401
    assert Client().login(username="otto-operator", password=PASSWORD)
    actions = list(AuditEvent.objects.order_by("at", "id").values_list("action", flat=True))
    assert actions[-2:] == ["user.disable", "user.enable"]


def test_another_persons_session_is_left_alone(db):
    make_person("otto-operator", "operator")
    make_person("ada-auditor", "auditor")
    other = signed_in("ada-auditor")
    run("disable", "otto-operator", "--reason", "left the company")
    assert other.get("/").status_code == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("disable", "nobody", "--reason", "r"), "no person named 'nobody'"),
        (("disable", "some-agent", "--reason", "r"), "no person named 'some-agent'"),
        (("revoke-tokens", "otto-operator", "--reason", "  "), "needs a reason"),
    ],
)
def test_refusals_name_what_is_wrong_and_change_nothing(db, args, message):
    make_agent("some-agent", [])
    person = make_person("otto-operator", "operator")
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert me(person.key) == 200
    assert not AuditEvent.objects.filter(action__startswith="user.t").exists()
    assert not AuditEvent.objects.filter(action="user.disable").exists()
