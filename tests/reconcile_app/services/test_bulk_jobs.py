"""Bulk triage jobs: many effects (or contradictions) through the single-row services, once."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.errors import Forbidden, ValidationFailed
from reconcile_app.models import AuditEvent, BulkJob, Contradiction, Effect
from reconcile_app.selectors.bulk import MAX_ITEMS
from reconcile_app.services.bulk_jobs import bulk_job_create, bulk_job_run
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_fault_add, sandbox_faults_clear
from tests.reconcile_app.console.conftest import commit_effect, issue_snapshot

REQUEST_ID = "req-bulk-1"


@pytest.fixture
def unknowns(estate: Any, agent: Any) -> list[Effect]:
    """Three effects the owner executed whose answers were lost: unknown outcomes."""
    effects = [commit_effect(agent, f"u-{n}", fault="timeout_after_commit") for n in range(3)]
    assert {effect.status for effect in effects} == {"unknown"}
    return effects


def create(operator: Any, **kwargs: Any) -> BulkJob:
    kwargs.setdefault("reason", "owner outage 09:00-09:20")
    return bulk_job_create(actor=operator.user, request_id=REQUEST_ID, **kwargs)


def test_recheck_concludes_every_unknown_outcome_once(unknowns, operator):
    job = create(operator, action="readback", filters={"status": "unknown"})
    assert (job.status, job.count, job.done, job.failed) == ("running", 3, 0, 0)

    job = bulk_job_run(job_id=job.job_id)

    assert (job.status, job.count, job.done, job.failed, job.skipped) == ("done", 3, 3, 0, 0)
    assert job.finished_at is not None
    keys = [effect.idempotency_key for effect in unknowns]
    assert set(
        Effect.objects.filter(idempotency_key__in=keys).values_list("status", flat=True)
    ) == {"verified"}
    # Applied once each: one receipt per key in the owner's ledger, one version step each.
    assert SandboxEffect.objects.filter(idempotency_key__in=keys).count() == 3
    for effect in unknowns:
        record = SandboxRecord.objects.get(subject=effect.subject, field=effect.field)
        assert record.version == effect.expected_version + 1
    # One job, and every row it wrote shares the request id that created it.
    created = AuditEvent.objects.get(action="bulk_job.create")
    assert (created.object_ref, created.reason, created.request_id) == (
        job.job_id,
        "owner outage 09:00-09:20",
        REQUEST_ID,
    )
    checks = AuditEvent.objects.filter(action="effect.readback")
    assert sorted(checks.values_list("object_ref", flat=True)) == sorted(keys)
    assert set(checks.values_list("request_id", "actor_name", "reason")) == {
        (REQUEST_ID, operator.name, "owner outage 09:00-09:20")
    }
    assert all(row.after == {"status": "verified", "job_id": job.job_id} for row in checks)


def test_a_redelivered_job_redoes_nothing(unknowns, operator):
    job = create(operator, action="readback", keys=[unknowns[0].idempotency_key])
    bulk_job_run(job_id=job.job_id)
    audit_rows = AuditEvent.objects.count()
    # The same task delivered again, and the job forced back to running as if it had died
    # before saying so: its finished item is not touched again.
    BulkJob.objects.filter(pk=job.pk).update(status="running", finished_at=None)
    job = bulk_job_run(job_id=job.job_id)
    assert (job.status, job.done, job.failed) == ("done", 1, 0)
    assert AuditEvent.objects.count() == audit_rows


def test_an_effect_concluded_before_the_job_reaches_it_is_skipped(unknowns, operator):
    first, *_ = unknowns
    job = create(operator, action="readback", keys=[e.idempotency_key for e in unknowns])
    bulk_job_run(job_id=create(operator, action="readback", keys=[first.idempotency_key]).job_id)

    job = bulk_job_run(job_id=job.job_id)

    assert (job.done, job.skipped, job.failed) == (3, 1, 0)
    skipped = job.items.get(ref=first.idempotency_key)
    assert (skipped.state, skipped.before, skipped.detail) == (
        "skipped",
        "verified",
        "already verified: nothing to re-check",
    )
    assert (
        AuditEvent.objects.filter(
            action="effect.readback", object_ref=first.idempotency_key
        ).count()
        == 1
    )


def test_recheck_while_the_owner_is_down_leaves_them_still_unknown_not_failed(unknowns, operator):
    """Asking the owner and getting no answer is the resolution's third outcome (DESIGN:
    succeeded | failed | unresolved), not an error of the job: counting it `failed` told the
    operator the re-check broke, or read as "the commands failed"."""
    sandbox_fault_add(source="case-service", kind="unavailable")
    job = bulk_job_run(
        job_id=create(operator, action="readback", filters={"status": "unknown"}).job_id
    )
    assert (job.status, job.done, job.failed, job.still_unknown) == ("done", 3, 0, 3)
    item = job.items.first()
    assert (item.state, item.after) == ("still_unknown", "unknown")
    assert item.detail.startswith("still unknown")
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}
    audited = AuditEvent.objects.filter(action="effect.readback").first()
    assert "error" not in audited.after and audited.after["detail"].startswith("still unknown")

    # After the outage, a second job concludes them.
    sandbox_faults_clear(source="case-service")
    job = bulk_job_run(
        job_id=create(operator, action="readback", filters={"status": "unknown"}).job_id
    )
    assert (job.done, job.failed, job.still_unknown) == (3, 0, 0)
    assert set(Effect.objects.values_list("status", flat=True)) == {"verified"}


def test_resolve_not_executed_goes_through_the_manual_resolution(unknowns, operator):
    job = create(
        operator, action="resolve", outcome="not_executed", keys=[unknowns[0].idempotency_key]
    )
    job = bulk_job_run(job_id=job.job_id)
    assert (job.done, job.failed) == (1, 0)
    assert Effect.objects.get(pk=unknowns[0].pk).status == "not_executed"
    resolved = AuditEvent.objects.get(action="effect.resolve")
    assert (resolved.object_ref, resolved.request_id, resolved.reason) == (
        unknowns[0].idempotency_key,
        REQUEST_ID,
        "owner outage 09:00-09:20",
    )
    # The row names the job it came from, as a re-check's does: an auditor reading one
    # verdict finds the selection and the count it was given with.
    assert resolved.after["job_id"] == job.job_id


def test_resolve_succeeded_still_needs_a_readback(
    unknowns, operator, django_capture_on_commit_callbacks
):
    job = create(
        operator, action="resolve", outcome="succeeded", keys=[unknowns[1].idempotency_key]
    )
    with django_capture_on_commit_callbacks() as queued:
        job = bulk_job_run(job_id=job.job_id)
    item = job.items.get()
    assert (item.state, item.after, item.detail) == ("done", "accepted", "awaiting readback")
    # Not verified on an operator's word: the readback is queued.
    assert Effect.objects.get(pk=unknowns[1].pk).status == "accepted"
    assert len(queued) == 1


def test_contradictions_are_resolved_in_bulk_with_the_note(estate, agent, operator):
    for subject in ("account-1", "account-2"):
        issue_snapshot(agent, subject=subject, claimed="collect")
    job = create(operator, kind="contradictions", action="resolve", filters={"status": "open"})
    job = bulk_job_run(job_id=job.job_id)
    assert (job.count, job.done) == (2, 2)
    assert set(Contradiction.objects.values_list("status", flat=True)) == {"resolved"}
    assert set(
        AuditEvent.objects.filter(action="contradiction.resolve").values_list(
            "request_id", "after__job_id"
        )
    ) == {(REQUEST_ID, job.job_id)}


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"action": "readback"}, "selection_required"),
        ({"action": "readback", "keys": ["u-0"], "filters": {}}, "selection_ambiguous"),
        ({"action": "readback", "keys": ["u-0", "nope"]}, "unknown_keys"),
        ({"action": "readback", "keys": []}, "nothing_matched"),
        ({"action": "readback", "keys": [3]}, "invalid_keys"),
        ({"action": "readback", "filters": {"status": "verified"}}, "nothing_matched"),
        ({"action": "readback", "filters": {"owner": "x"}}, "invalid_filter"),
        ({"action": "readback", "filters": {"status": "bogus"}}, "invalid_filter"),
        ({"action": "resolve", "keys": ["u-0"]}, "outcome_required"),
        ({"action": "resolve", "outcome": "maybe", "keys": ["u-0"]}, "invalid_outcome"),
        ({"action": "readback", "outcome": "succeeded", "keys": ["u-0"]}, "outcome_not_applicable"),
        ({"action": "rollback", "keys": ["u-0"]}, "invalid_action"),
        ({"action": "readback", "keys": ["u-0"], "reason": "  "}, "reason_required"),
    ],
)
def test_a_bad_request_is_refused_with_its_code_and_writes_nothing(
    unknowns, operator, kwargs, code
):
    with pytest.raises(ValidationFailed) as refused:
        create(operator, **kwargs)
    assert refused.value.code == code
    assert not BulkJob.objects.exists()
    assert not AuditEvent.objects.filter(action="bulk_job.create").exists()


def test_a_selection_over_the_limit_is_refused(unknowns, operator):
    keys = [f"k-{n}" for n in range(MAX_ITEMS + 1)]
    with pytest.raises(ValidationFailed) as refused:
        create(operator, action="readback", keys=keys)
    assert refused.value.code == "selection_too_large"


def test_only_operators_run_bulk_jobs(unknowns, auditor):
    with pytest.raises(Forbidden):
        create(auditor, action="readback", filters={"status": "unknown"})


def test_a_fingerprint_of_other_rows_is_refused_and_fixes_nothing(unknowns, operator):
    from reconcile_app.errors import Conflict
    from reconcile_app.selectors.bulk import effect_selection

    previewed = effect_selection(action="readback", filters={"status": "unknown"})
    # Order does not matter; membership does.
    assert (
        previewed.fingerprint
        == effect_selection(action="readback", keys=list(reversed(previewed.refs))).fingerprint
    )
    Effect.objects.filter(pk=unknowns[0].pk).update(status="verified")
    with pytest.raises(Conflict) as refused:
        create(
            operator,
            action="readback",
            filters={"status": "unknown"},
            fingerprint=previewed.fingerprint,
        )
    assert (refused.value.code, refused.value.status) == ("selection_changed", 409)
    assert (
        not BulkJob.objects.exists()
        and not AuditEvent.objects.filter(action="bulk_job.create").exists()
    )
    current = effect_selection(action="readback", filters={"status": "unknown"})
    job = create(
        operator, action="readback", filters={"status": "unknown"}, fingerprint=current.fingerprint
    )
    assert job.count == 2


def test_a_resolution_is_given_only_on_the_status_the_operator_selected(unknowns, operator):
    """Selected unknown; meanwhile the owner's receipt came back and the readback failed:
    "not executed" would overrule the owner's own word on a state nobody confirmed."""
    moved, *rest = unknowns
    job = create(operator, action="resolve", outcome="not_executed", filters={"status": "unknown"})
    Effect.objects.filter(pk=moved.pk).update(status="postcondition_failed")

    job = bulk_job_run(job_id=job.job_id)

    assert (job.done, job.skipped, job.failed) == (3, 1, 0)
    item = job.items.get(ref=moved.idempotency_key)
    assert item.state == "skipped"
    assert "was unknown when selected, now postcondition_failed" in item.detail
    assert Effect.objects.get(pk=moved.pk).status == "postcondition_failed"
    assert {Effect.objects.get(pk=effect.pk).status for effect in rest} == {"not_executed"}


def test_a_job_stops_acting_for_an_operator_whose_account_was_taken_away(unknowns, operator):
    job = create(operator, action="resolve", outcome="not_executed", filters={"status": "unknown"})
    operator.user.is_active = False
    operator.user.save(update_fields=["is_active"])

    job = bulk_job_run(job_id=job.job_id)

    assert (job.status, job.done, job.failed) == ("done", 0, 3)
    assert all("no longer an active operator" in item.detail for item in job.items.all())
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}
    assert not AuditEvent.objects.filter(action="effect.resolve").exists()


def test_a_job_stops_acting_for_someone_no_longer_an_operator(unknowns, operator):
    job = create(operator, action="readback", filters={"status": "unknown"})
    operator.user.groups.clear()

    job = bulk_job_run(job_id=job.job_id)

    assert job.failed == 3
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}
