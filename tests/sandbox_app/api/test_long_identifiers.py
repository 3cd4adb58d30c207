"""An operator's sandbox writes name identifiers of up to 200 characters (API.md "Input
limits") and are audited: the audit row names `source/subject/field`, `source/fact_key`,
`source/idempotency_key` or `source/event_id`, longer than any one identifier. Each is
stored whole; none is a 500 on PostgreSQL."""

from __future__ import annotations

import pytest

from reconcile_app.models import AuditEvent

SANDBOX = "/api/v1/sandbox/case-service"
LONGEST = "s" * 200


def put(persona, path, body):
    return persona.client.put(path, body, format="json")


@pytest.mark.parametrize(
    ("method", "path", "body", "ref"),
    [
        (
            "put",
            f"{SANDBOX}/records/{LONGEST}/collections_status",
            {"value": "hold"},
            f"case-service/{LONGEST}/collections_status",
        ),
        (
            "put",
            f"{SANDBOX}/authority/baseline.{'k' * 191}",
            {"owner": "eval-registry", "source_revision": "r1"},
            f"case-service/baseline.{'k' * 191}",
        ),
        (
            "post",
            f"{SANDBOX}/events",
            {"event_id": "e" * 100, "type": "x", "subject": LONGEST},
            f"case-service/{'e' * 100}",
        ),
    ],
)
def test_a_sandbox_write_naming_a_200_character_identifier_is_audited_whole(
    estate, operator, method, path, body, ref
):
    response = getattr(operator.client, method)(path, body, format="json")

    assert response.status_code in (200, 201), response.content
    assert AuditEvent.objects.filter(object_kind="sandbox", object_ref=ref).count() == 1


def test_an_owner_side_effect_with_a_200_character_key_is_audited_whole(estate, operator):
    put(operator, f"{SANDBOX}/records/{LONGEST}/collections_status", {"value": "hold"})

    response = operator.client.post(
        f"{SANDBOX}/effects",
        {
            "subject": LONGEST,
            "field": "collections_status",
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="k" * 200,
        HTTP_IF_MATCH='"1"',
    )

    assert response.status_code == 201, response.content
    assert AuditEvent.objects.filter(object_ref=f"case-service/{'k' * 200}").count() == 1
