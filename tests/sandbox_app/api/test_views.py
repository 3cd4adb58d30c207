"""The sandbox owner system over HTTP: versioned records, ETags, operator-only changes, faults."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from reconcile_app.models import AuditEvent
from sandbox_app.models import SandboxEffect, SandboxFault, SandboxRecord
from tests.factories import ACCOUNT, SandboxRecordFactory

SANDBOX = "/api/v1/sandbox/case-service"
RECORD = f"{SANDBOX}/records/{ACCOUNT}/collections_status"
FAULTS = f"{SANDBOX}/faults"


def put(persona, path, body):
    return persona.client.put(path, body, format="json")


def test_an_operator_reads_a_record_with_its_etag(estate, operator, now):
    valid_from = now - timedelta(minutes=20)
    SandboxRecordFactory(value="hold", version=42, valid_from=valid_from)

    response = operator.client.get(RECORD)

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"42"'
    body = response.json()
    assert (body["value"], body["version"]) == ("hold", 42)
    assert parse_datetime(body["valid_from"]) == valid_from
    assert body["recorded_at"].endswith("Z")
    observed = parse_datetime(body["observed_at"])
    assert abs((timezone.now() - observed).total_seconds()) < 5


SIDE_DOORS = [
    ("get", RECORD, None),
    ("put", RECORD, {"value": "PWNED"}),
    (
        "post",
        f"{SANDBOX}/effects",
        {
            "subject": ACCOUNT,
            "field": "collections_status",
            "action": "x",
            "resulting_value": "PWNED",
        },
    ),
    ("get", f"{SANDBOX}/effects/k-1", None),
    ("get", f"{SANDBOX}/authority/baseline.math-eval", None),
    ("put", f"{SANDBOX}/authority/baseline.math-eval", {"owner": "me", "source_revision": "r1"}),
    ("get", f"{SANDBOX}/events?subject={ACCOUNT}", None),
    ("post", f"{SANDBOX}/events", {"event_id": "e-1", "type": "x", "subject": ACCOUNT}),
    ("post", FAULTS, {"kind": "unavailable"}),
    ("delete", FAULTS, None),
]


@pytest.mark.parametrize(
    ("persona_name", "code"),
    [
        ("agent", "people_only"),
        ("outsider", "people_only"),
        ("auditor", "forbidden"),
        ("reviewer", "forbidden"),
    ],
)
@pytest.mark.parametrize(("method", "path", "body"), SIDE_DOORS)
def test_only_operators_reach_the_sandbox_at_all(
    estate, request, persona_name, code, method, path, body
):
    persona = request.getfixturevalue(persona_name)
    SandboxRecordFactory(value="hold", version=42)

    call = getattr(persona.client, method)
    response = call(path, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1", HTTP_IF_MATCH='"42"')

    assert response.status_code == 403, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    record = SandboxRecord.objects.get(subject=ACCOUNT)
    assert (record.value, record.version) == ("hold", 42)
    assert not SandboxFault.objects.exists()
    assert not SandboxEffect.objects.exists()
    assert not AuditEvent.objects.filter(object_kind="sandbox").exists()


def test_every_operator_change_is_audited(estate, operator):
    SandboxRecordFactory(value="hold", version=42)
    client = operator.client
    client.put(RECORD, {"value": "collect"}, format="json", HTTP_X_REQUEST_ID="req-sbx")
    client.post(FAULTS, {"kind": "lag", "seconds": 5}, format="json")
    client.delete(FAULTS)
    client.put(
        f"{SANDBOX}/authority/baseline.x", {"owner": "o", "source_revision": "r"}, format="json"
    )
    client.post(
        f"{SANDBOX}/events",
        {"event_id": "e-1", "type": "Opened", "subject": ACCOUNT},
        format="json",
    )
    applied = client.post(
        f"{SANDBOX}/effects",
        {
            "subject": ACCOUNT,
            "field": "collections_status",
            "action": "retain",
            "resulting_value": "manual_review",
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="k-ops",
        HTTP_IF_MATCH='"43"',
    )
    assert applied.status_code == 201, applied.content

    rows = AuditEvent.objects.filter(object_kind="sandbox").order_by("at", "id")
    assert [(row.action, row.object_ref) for row in rows] == [
        ("sandbox.record.write", f"case-service/{ACCOUNT}/collections_status"),
        ("sandbox.fault.add", "case-service"),
        ("sandbox.fault.clear", "case-service"),
        ("sandbox.authority.write", "case-service/baseline.x"),
        ("sandbox.event.append", "case-service/e-1"),
        ("sandbox.effect.apply", "case-service/k-ops"),
    ]
    assert {row.actor_name for row in rows} == {operator.name}
    first = rows[0]
    assert (first.request_id, first.after) == ("req-sbx", {"value": "collect", "version": 43})


def test_a_refused_change_leaves_no_audit_row(estate, operator):
    response = operator.post(FAULTS, {"kind": "gremlins"})
    assert response.status_code == 400
    assert not AuditEvent.objects.filter(object_kind="sandbox").exists()


def test_path_identifiers_are_checked(estate, operator):
    response = operator.client.get(f"{SANDBOX}/records/a%20b/collections_status")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_identifier"


def test_unknown_record_and_unknown_source_are_404_problems(estate, operator):
    response = operator.client.get(f"{SANDBOX}/records/account-404/collections_status")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "record_not_found"

    response = operator.client.get("/api/v1/sandbox/no-such-owner/records/a/b")
    assert response.status_code == 404
    assert response.json()["code"] == "unknown_source"


def test_anonymous_cannot_read_the_sandbox(estate, client):
    assert client.get(RECORD).status_code == 401


def test_operator_write_adds_one_to_the_version(estate, operator):
    first = put(operator, RECORD, {"value": "collect"})
    assert first.status_code == 200, first.content
    assert first.json()["version"] == 1
    second = put(operator, RECORD, {"value": "hold"})
    assert second.json()["version"] == 2
    assert second["ETag"] == '"2"'
    assert operator.client.get(RECORD).json()["value"] == "hold"
    assert SandboxRecord.objects.get(subject=ACCOUNT).version == 2


def test_operator_write_after_a_jump_continues_from_it(estate, operator):
    SandboxRecordFactory(value="hold", version=42)
    assert put(operator, RECORD, {"value": "manual_review"}).json()["version"] == 43


@pytest.mark.parametrize("version", [10**23, 2**63 - 1], ids=["past-64-bits", "64-bit-top"])
def test_a_version_set_by_hand_leaves_room_for_later_writes(estate, operator, version):
    """A version past 64 bits answered 500 (bigint out of range); one at 2^63 - 1 was stored,
    and every later write of that record answered 500."""
    response = put(operator, RECORD, {"value": "hold", "version": version})
    assert (response.status_code, response.json()["code"]) == (400, "invalid_request")
    assert not SandboxRecord.objects.exists()
    assert put(operator, RECORD, {"value": "hold", "version": 10**18}).status_code == 200
    assert put(operator, RECORD, {"value": "collect"}).json()["version"] == 10**18 + 1


@pytest.mark.parametrize("seq", [10**23, -(10**23), 2**63 - 1])
def test_an_event_seq_set_by_hand_leaves_room_for_the_next(estate, operator, seq):
    """A seq past 64 bits answered 500; one at 2^63 - 1 was stored, and every later event of
    the source without a seq answered 500."""
    event = {"event_id": "e-1", "type": "PaymentMissed", "subject": ACCOUNT}
    response = operator.post(f"{SANDBOX}/events", {**event, "seq": seq})
    assert (response.status_code, response.json()["code"]) == (400, "invalid_request")
    assert operator.post(f"{SANDBOX}/events", {**event, "seq": 10**18}).status_code == 201
    following = operator.post(f"{SANDBOX}/events", {**event, "event_id": "e-2"})
    assert following.status_code == 201, following.content
    assert following.json()["seq"] == 10**18 + 1


def test_unavailable_fault_makes_reads_fail_until_cleared(estate, operator):
    SandboxRecordFactory(value="hold", version=42)
    response = operator.post(FAULTS, {"kind": "unavailable"})
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "unavailable"

    for _ in range(3):
        failing = operator.client.get(RECORD)
        assert failing.status_code == 503
        assert failing["Content-Type"] == "application/problem+json"

    cleared = operator.client.delete(FAULTS)
    assert cleared.status_code == 200
    assert cleared.json()["cleared"] == 1
    assert operator.client.get(RECORD).status_code == 200


def test_counted_fault_fires_that_many_times_then_clears(estate, operator):
    SandboxRecordFactory(value="hold", version=42)
    assert operator.post(FAULTS, {"kind": "unavailable", "count": 2}).status_code == 201

    statuses = [operator.client.get(RECORD).status_code for _ in range(4)]

    assert statuses == [503, 503, 200, 200]
    assert not SandboxFault.objects.filter(source="case-service").exists()


def test_lag_fault_shifts_observed_at_into_the_past(estate, operator):
    SandboxRecordFactory(value="hold", version=42)
    fresh = operator.client.get(RECORD).json()
    assert operator.post(FAULTS, {"kind": "lag", "seconds": 600, "count": 1}).status_code == 201

    lagging = operator.client.get(RECORD).json()
    after = operator.client.get(RECORD).json()

    lag = parse_datetime(fresh["observed_at"]) - parse_datetime(lagging["observed_at"])
    assert 595 <= lag.total_seconds() <= 605
    # The record itself did not change: only how recently the replica vouches for it.
    assert (lagging["value"], lagging["version"], lagging["recorded_at"]) == (
        fresh["value"],
        fresh["version"],
        fresh["recorded_at"],
    )
    assert parse_datetime(after["observed_at"]) >= parse_datetime(fresh["observed_at"])


def test_faults_on_one_source_leave_others_alone(estate, operator):
    SandboxRecordFactory(value="hold", version=42)
    SandboxRecordFactory(source="complaints-service", field="complaint_status", value="none")
    operator.post("/api/v1/sandbox/complaints-service/faults", {"kind": "unavailable"})

    assert operator.client.get(RECORD).status_code == 200
    complaint = "/api/v1/sandbox/complaints-service/records/account-17/complaint_status"
    assert operator.client.get(complaint).status_code == 503


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "gremlins"},
        {"kind": "lag"},
        {"kind": "unavailable", "count": 0},
        {"kind": "lag", "seconds": -5},
        # Beyond any database's integer: refused here, not an overflow in the INSERT (500).
        {"kind": "lag", "seconds": 1, "count": 9223372036854775808},
    ],
)
def test_invalid_faults_are_refused(estate, operator, body):
    response = operator.post(FAULTS, body)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert not SandboxFault.objects.exists()
