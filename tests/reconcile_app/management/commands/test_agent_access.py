"""agent_access: a leaked key rotated, an agent disabled, a capability withdrawn, each at
once (the configuration epoch) and audited with who and why."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from reconcile_app.models import AuditEvent
from tests.conftest import make_agent
from tests.reconcile_app.effects.conftest import collectible, reconcile  # noqa: F401


def run(*args: str) -> str:
    out = StringIO()
    call_command("agent_access", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def me(key: str) -> int:
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {key}").get("/api/v1/me").status_code


def test_rotating_a_key_closes_the_api_to_every_earlier_key(db):
    leaked = make_agent("leaky-agent", [])
    assert me(leaked.key) == 200

    fresh = run("rotate-key", "leaky-agent", "--reason", "key pasted into a public issue")

    assert (me(leaked.key), me(fresh)) == (401, 200)
    event = AuditEvent.objects.get(action="principal.key_rotate")
    assert event.reason == "key pasted into a public issue"
    assert event.actor_name.startswith("agent_access (")
    assert event.after["revoked"] == [leaked.key.split("_", 2)[1]]


def test_a_disabled_agent_is_refused_until_enabled_again(db):
    agent = make_agent("paused-agent", [])
    run("disable", "paused-agent", "--reason", "acting outside its runbook")
    assert me(agent.key) == 401
    run("enable", "paused-agent", "--reason", "runbook fixed")
    assert me(agent.key) == 200
    actions = list(AuditEvent.objects.order_by("at", "id").values_list("action", flat=True))
    assert actions[-2:] == ["principal.disable", "principal.enable"]


def test_a_withdrawn_capability_stops_the_next_reconcile(collectible, agent):
    assert reconcile(agent, "release_collections_hold")["decision"]["result"] == "allow"

    run(
        "revoke-capability",
        "collections-agent",
        "collections-contact-release:release_collections_hold",
        "--reason",
        "releases go through people now",
    )

    refused = agent.post(
        "/api/v1/reconcile",
        {
            "subject": "account-17",
            "purpose": "collections",
            "decision_class": "collections-contact-release",
            "proposed_action": "release_collections_hold",
        },
    )
    assert refused.status_code == 403, refused.content
    assert AuditEvent.objects.get(action="principal.revoke").after == {
        "removed": ["collections-contact-release:release_collections_hold"]
    }


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("disable", "nobody-agent", "--reason", "x"), "no agent principal"),
        (("disable", "some-agent", "--reason", "  "), "needs a reason"),
        (("revoke-capability", "some-agent", "a:b", "--reason", "x"), "does not hold a:b"),
        (("revoke-capability", "some-agent", "--reason", "x"), "names capabilities"),
    ],
)
def test_refusals_change_nothing(db, args, words):
    agent = make_agent("some-agent", ["a:c"])
    with pytest.raises(CommandError, match=words):
        run(*args)
    assert me(agent.key) == 200
    assert (
        not AuditEvent.objects.filter(object_kind="principal")
        .exclude(action="principal.create")
        .exists()
    )


def test_a_wildcard_granted_before_they_were_refused_grants_nothing_and_can_be_removed(estate):
    from reconcile_app.models import Capability

    legacy = make_agent("legacy-agent", [])
    Capability.objects.create(
        principal=legacy.principal, decision_class="collections-contact-release", action="*"
    )
    refused = legacy.post(
        "/api/v1/reconcile",
        {
            "subject": "account-17",
            "purpose": "collections",
            "decision_class": "collections-contact-release",
        },
    )
    assert (refused.status_code, refused.json()["code"]) == (403, "capability_missing")

    run(
        "revoke-capability",
        "legacy-agent",
        "collections-contact-release:*",
        "--reason",
        "wildcards grant unreviewed actions",
    )

    assert not Capability.objects.filter(principal=legacy.principal).exists()


def test_attest_and_fact_capabilities_are_withdrawn_as_actions_are(db):
    # The command's help named only DECISION_CLASS:ACTION; an agent's attest: and fact:
    # grants are withdrawn the same way, which a leaked key's owner needs as much.
    agent = make_agent("ledger-agent", ["attest:case-ledger", "fact:baseline.*", "a:c"])

    run(
        "revoke-capability",
        "ledger-agent",
        "attest:case-ledger",
        "fact:baseline.*",
        "--reason",
        "attestations go through the case team now",
    )

    answer = APIClient(HTTP_AUTHORIZATION=f"Bearer {agent.key}").get("/api/v1/me").json()
    assert (answer["attests"], answer["fact_patterns"], answer["capabilities"]) == ([], [], ["a:c"])
