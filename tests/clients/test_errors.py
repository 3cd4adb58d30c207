"""Each problem the client maps, produced by a real request to a live server, raises its class
with the status, the code and the body (docs/api.md's codes; reconcile_client/errors.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import reconcile_client as rcl
from reconcile_client import ReconcileClient, ReconcileError

from reconcile_app.services.corrections import correction_create
from reconcile_app.services.quarantine import quarantine_create
from sandbox_app.services import sandbox_fault_add
from tests.clients.conftest import RELEASE, SOURCE, Served
from tests.conftest import COLLECTIONS, ESTATE, Persona
from tests.factories import load_yaml


def raised(call: Callable[[], Any]) -> ReconcileError:
    with pytest.raises(ReconcileError) as caught:
        call()
    return caught.value


def check(error: ReconcileError, cls: type[ReconcileError], status: int, code: str) -> None:
    assert type(error) is cls, (type(error).__name__, error.status, error.code, error.detail)
    assert (error.status, error.code) == (status, code)
    assert error.body["code"] == code and error.detail


def test_refusals_before_anything_is_recorded(
    served: Served, rc: ReconcileClient, outsider: Persona
) -> None:
    with served.client("rk_nothing_here") as stranger:
        check(raised(stranger.me), rcl.NotAuthorised, 401, "authentication_failed")
    with served.client(outsider.key) as unprivileged:
        check(raised(lambda: served.reconcile(unprivileged)), rcl.CapabilityMissing, 403,
              "capability_missing")  # fmt: skip
    bad_subject = raised(lambda: served.reconcile(rc, subject="two words"))
    check(bad_subject, rcl.ValidationError, 400, "invalid_identifier")
    pinned = raised(
        lambda: rc.reconcile(
            subject=served.subject,
            purpose="collections",
            decision_class=COLLECTIONS,
            contract_version="0.1",
        )
    )
    check(pinned, rcl.ContractVersionInactive, 422, "contract_version_inactive")
    assert pinned.body["active_version"] == "7.3"
    check(raised(lambda: rc.effect("no-such-key")), rcl.NotFound, 404, "effect_not_found")

    on_hold = served.account("account-hold", status="hold")
    denied = served.reconcile(rc, subject=on_hold)
    assert denied.decision.result == "deny" and not denied.authorises(RELEASE)
    refused = raised(lambda: rc.commit(denied, action=RELEASE, resulting_value="released"))
    check(refused, rcl.DecisionNotAllowed, 403, "decision_not_allowed")


def test_commit_problems_each_raise_their_class(
    served: Served, rc: ReconcileClient, operator: Persona
) -> None:
    snapshot = served.reconcile(rc)
    mismatch = raised(
        lambda: rc.commit(snapshot, action=RELEASE, resulting_value="released", if_match='"41"')
    )
    check(mismatch, rcl.SnapshotVersionMismatch, 412, "snapshot_version_mismatch")

    sandbox_fault_add(source=SOURCE, kind="unavailable", count=1)
    down = raised(lambda: rc.commit(snapshot, action=RELEASE, resulting_value="released"))
    check(down, rcl.OwnerUnavailable, 503, "owner_unavailable")

    moved = served.account("account-moved")
    read = served.reconcile(rc, subject=moved)
    served.owner_writes("manual_review", subject=moved)
    changed = raised(lambda: rc.commit(read, action=RELEASE, resulting_value="released"))
    check(changed, rcl.VersionChanged, 412, "version_changed")
    assert isinstance(changed, rcl.VersionChanged)
    assert (changed.expected, changed.found) == (42, 43)
    assert changed.effect is not None and changed.effect["status"] == "rejected"

    tainted = served.account("account-tainted")
    relied_on = served.reconcile(rc, subject=tainted)
    correction_create(
        evidence_id=relied_on.fields["collections_status"].evidence[0],
        reason="the note was about another account",
        actor=operator.user,
    )
    check(
        raised(lambda: rc.commit(relied_on, action=RELEASE, resulting_value="released")),
        rcl.SnapshotTainted,
        409,
        "snapshot_tainted",
    )

    done = served.account("account-done")
    first = rc.commit(
        served.reconcile(rc, subject=done), action=RELEASE, resulting_value="released"
    )
    reused = raised(
        lambda: rc.commit(
            first.snapshot_id,
            action=RELEASE,
            resulting_value="something else",
            idempotency_key=first.idempotency_key,
        )
    )
    check(reused, rcl.IdempotencyKeyReused, 422, "idempotency_key_reused")


def test_a_new_contract_version_or_a_quarantine_stops_a_snapshot(
    served: Served, rc: ReconcileClient, operator: Persona, tmp_path: Path
) -> None:
    before_rollout = served.reconcile(rc)
    quarantined = served.reconcile(rc, subject=served.account("account-quarantined"))
    next_version = (ESTATE / "collections-contact-release.yaml").read_text()
    load_yaml(tmp_path, {"next.yaml": next_version.replace('version: "7.3"', 'version: "7.4"')})
    check(
        raised(lambda: rc.commit(before_rollout, action=RELEASE, resulting_value="released")),
        rcl.ContractSuperseded,
        409,
        "contract_superseded",
    )

    under_74 = served.reconcile(rc, subject=quarantined.subject)
    quarantine_create(
        scope="source", target=SOURCE, reason="owner answers garbage", actor=operator.user
    )
    held = raised(lambda: rc.commit(under_74, action=RELEASE, resulting_value="released"))
    check(held, rcl.SourceQuarantined, 423, "source_quarantined")


def test_a_joined_retry_at_a_state_no_reviewer_saw_names_the_approved_snapshot(
    served: Served, rc: ReconcileClient, reviewer: Persona
) -> None:
    """403 `approved_state_moved` says which snapshot the approval authorises and which field
    moved. It was a plain `Forbidden` ("do not act"), its `approved_snapshot_id` and `field`
    only in `.body`, though committing that snapshot in its window is what the agent can do."""
    subject = served.account("account-complaint")
    served.owner_writes("open", subject=subject, field="complaint_status")
    asked = served.reconcile(rc, subject=subject)
    assert asked.decision.result == "escalate" and asked.escalation_id
    approved = reviewer.post(
        f"/api/v1/escalations/{asked.escalation_id}/approve", {"rationale": "not about this"}
    )
    assert approved.status_code == 200, approved.content
    served.owner_writes("collect", subject=subject)  # the version the action writes moves on
    retried = served.reconcile(rc, subject=subject)
    assert retried.escalation_id == asked.escalation_id  # it joined the approved escalation

    moved = raised(lambda: rc.commit(retried, action=RELEASE, resulting_value="released"))
    check(moved, rcl.ApprovedStateMoved, 403, "approved_state_moved")
    assert isinstance(moved, rcl.ApprovedStateMoved) and isinstance(moved, rcl.Forbidden)
    assert moved.escalation_id == asked.escalation_id
    assert moved.approved_snapshot_id == asked.snapshot_id
    assert moved.field == "collections_status"
