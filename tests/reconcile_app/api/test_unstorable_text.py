"""A lone UTF-16 surrogate ("\\ud800") decodes to a Python string that no encoder, renderer or
database driver accepts. Sent anywhere in a JSON body, it is a 400 `malformed_json` at the
parser, before any field reads it: it once became a 500 in the value limit, in DRF's
rendering of a "not a valid choice" message, and at the write of a bulk job's reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reconcile_app.models import BulkJob, EvidenceEntry, Quarantine
from tests.factories import ACCOUNT, claim, reconcile_body

from .test_errors import assert_problem

MARK = "LONE-SURROGATE"


def spoiled(body: Any) -> bytes:
    """`body` as JSON, with every string `MARK` spelled as JSON's lone surrogate `\\ud800`."""
    return json.dumps(body).replace(f'"{MARK}"', '"\\ud800"').encode()


def send(persona, path: str, body: Any, method: str = "post"):
    return getattr(persona.client, method)(path, spoiled(body), content_type="application/json")


OBSERVATION = {
    "kind": "observation",
    "subject": ACCOUNT,
    "field": "collections_status",
    "value": 1,
    "source": "case-ledger",
    "observed_at": "2026-12-05T08:00:00Z",
}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        # the value limit encoded it
        ("/api/v1/evidence", {**OBSERVATION, "value": MARK}),
        # DRF echoed it in "is not a valid choice" and failed to render its own 400
        ("/api/v1/evidence", {**OBSERVATION, "kind": MARK}),
        ("/api/v1/quarantines", {"scope": MARK, "target": "x", "reason": "r"}),
        # a bulk job's reason reached the database
        ("/api/v1/effects/bulk", {"action": "readback", "reason": MARK, "keys": ["k-1"]}),
        # in a key, not a value
        ("/api/v1/memories", {"value": {MARK: 1}}),
    ],
    ids=["evidence-value", "evidence-kind", "quarantine-scope", "bulk-reason", "key"],
)
def test_a_lone_surrogate_is_a_400_and_writes_nothing(estate, operator, path, body):
    problem = assert_problem(send(operator, path, body), 400, "malformed_json")
    assert "surrogate" in problem["detail"]
    assert not EvidenceEntry.objects.filter(subject=ACCOUNT).exists()
    assert not Quarantine.objects.exists()
    assert not BulkJob.objects.exists()


def test_a_lone_surrogate_in_a_claim_or_proposed_value_is_a_400(estate, agent, now):
    for body in (
        reconcile_body(claims=[claim(MARK, written_at=now)]),
        {**reconcile_body(), "proposed_value": MARK},
    ):
        assert_problem(send(agent, "/api/v1/reconcile", body), 400, "malformed_json")


def test_an_owner_write_with_a_lone_surrogate_is_a_400(estate, operator):
    path = "/api/v1/sandbox/case-service/records/account-17/collections_status"
    assert_problem(send(operator, path, {"value": MARK}, method="put"), 400, "malformed_json")


def test_a_pair_of_surrogates_is_one_character_and_is_kept(estate, operator, now):
    """ "\\ud83d\\ude00" is JSON's spelling of one emoji: the decoder joins it, so it is text."""
    body = json.dumps({**OBSERVATION, "value": "ok \U0001f600", "observed_at": now.isoformat()})
    assert "\\ud83d\\ude00" in body  # json.dumps spells it as the pair
    response = operator.client.post("/api/v1/evidence", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert EvidenceEntry.objects.get(subject=ACCOUNT).value == "ok \U0001f600"
