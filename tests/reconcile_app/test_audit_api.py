"""Every operator, reviewer and administrator action lands in the audit trail."""

from __future__ import annotations

from django.core.management import call_command

from reconcile_app.models import AuditEvent


def test_user_and_key_management_is_audited(db, capsys):
    call_command("create_principal", "audited-agent", "--capability", "dispatch-card:dispatch_card")
    call_command("create_user", "audited-person", "--group", "auditor")
    made = AuditEvent.objects.filter(object_kind__in=["principal", "user"])
    assert list(made.order_by("at").values_list("action", "object_ref")) == [
        ("principal.create", "audited-agent"),
        ("user.create", "audited-person"),
    ]
    assert AuditEvent.objects.get(action="principal.create").after["capabilities"] == [
        "dispatch-card:dispatch_card"
    ]


def test_audit_api_filters_and_is_staff_only(db, operator, auditor, agent):
    operator.post(
        "/api/v1/quarantines",
        {"scope": "memory_class", "target": "episodic", "reason": "poisoned summaries"},
    )
    body = auditor.client.get("/api/v1/audit", {"action": "quarantine.create"}).json()
    assert [item["actor"] for item in body["results"]] == [operator.name]
    assert body["results"][0]["reason"] == "poisoned summaries"
    assert body["results"][0]["request_id"]
    assert auditor.client.get("/api/v1/audit", {"actor": "nobody"}).json()["count"] == 0
    assert agent.client.get("/api/v1/audit").status_code == 403


def test_audit_api_follows_one_request(db, operator, auditor):
    operator.post(
        "/api/v1/quarantines",
        {"scope": "memory_class", "target": "episodic", "reason": "poisoned summaries"},
        HTTP_X_REQUEST_ID="req-follow-1",
    )
    operator.post(
        "/api/v1/quarantines",
        {"scope": "memory_class", "target": "semantic", "reason": "poisoned summaries"},
        HTTP_X_REQUEST_ID="req-follow-2",
    )
    body = auditor.client.get("/api/v1/audit", {"request_id": "req-follow-2"}).json()
    assert body["count"] == 1
    assert body["results"][0]["request_id"] == "req-follow-2"
