"""The evidence support index holds, after any sequence of appends and withdrawals, exactly
the latest unwithdrawn entry per value that the ledger itself gives; and replay rebuilds a
snapshot under the support rule it was issued with."""

from __future__ import annotations

import functools
import itertools
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile_app.models import DecisionSnapshot, EvidenceEntry
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.support import latest_per_value
from reconcile_app.selectors.ledger import evidence_as_of, evidence_latest
from reconcile_app.services import reconcile as reconcile_service
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.replay import snapshot_replay
from tests.reconcile_app.gate.test_epoch_caches import _reconcile, account

FIELD = "collections_status"
subjects = itertools.count()

# An operation: append a value (observed some minutes ago), or withdraw the n-th entry so
# far by revoking it or superseding it with a value.
operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"), st.sampled_from(["hold", "collect", 3, None]), st.integers(0, 50)
        ),
        st.tuples(st.just("revoke"), st.integers(0, 30), st.integers(0, 50)),
        st.tuples(st.just("supersede"), st.integers(0, 30), st.sampled_from(["hold", "collect"])),
    ),
    min_size=1,
    max_size=14,
)


def _ids(views):
    return sorted((view.field, view.evidence_id) for view in views)


@pytest.mark.django_db
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_the_index_agrees_with_the_ledger(steps):
    subject = f"acct-{next(subjects)}"  # each example its own subject: examples share a database
    now = timezone.now()
    appended: list[str] = []
    for kind, first, second in steps:
        if kind == "append":
            entry = evidence_append(
                kind="observation",
                subject=subject,
                field=FIELD,
                value=first,
                source="case-ledger",
                observed_at=now - timedelta(minutes=second),
            )
        elif not appended:
            continue
        else:
            target = appended[first % len(appended)]
            entry = evidence_append(
                kind="correction",
                subject=subject,
                field=FIELD,
                value=second if kind == "supersede" else None,
                source="case-ledger",
                observed_at=now,
                **({"supersedes": target} if kind == "supersede" else {"revokes": target}),
            )
        appended.append(entry.evidence_id)
        later = timezone.now() + timedelta(seconds=1)
        from_index, ledger_seq = evidence_latest(subject=subject, fields={FIELD}, recorded_by=later)
        from_ledger = latest_per_value(
            evidence_as_of(subject=subject, fields={FIELD}, recorded_by=later)
        )
        assert from_index is not None
        assert _ids(from_index) == _ids(from_ledger)
        assert ledger_seq == entry.seq


def test_the_index_reads_values_and_times_as_the_ledger_does(db):
    """Every JSON shape, several fields and kinds, aware times: the same views, on both
    engines, as the ORM's read of the ledger."""
    subject = "acct-shapes"
    observed = timezone.now() - timedelta(minutes=5)
    entries = [
        ("observation", "status", "hold"),
        ("observation", "status", {"code": "hold", "reasons": ["fraud", 2], "ok": None}),
        ("document", "limit", 1250.75),
        ("document", "limit", 12),
        ("observation", "flags", [True, False, "€"]),
        ("readback", "status", {"value": "collect"}),
        ("effect_receipt", "limit", {"resulting_value": {"amount": 10, "currency": "EUR"}}),
        ("effect_receipt", "limit", {"note": "no resulting value: asserts nothing"}),
    ]
    for kind, field, value in entries:
        evidence_append(
            kind=kind,
            subject=subject,
            field=field,
            value=value,
            source="case-ledger",
            observed_at=observed,
        )
    fields = {"status", "limit", "flags", "absent"}
    later = timezone.now() + timedelta(seconds=1)

    from_index, ledger_seq = evidence_latest(subject=subject, fields=fields, recorded_by=later)
    from_ledger = latest_per_value(
        evidence_as_of(subject=subject, fields=fields, recorded_by=later)
    )

    assert from_index is not None
    assert len(from_index) == 7
    assert sorted(from_index, key=_key) == sorted(from_ledger, key=_key)
    assert all(view.observed_at == observed for view in from_index)
    assert all(view.recorded_at.tzinfo is not None for view in from_index)
    assert evidence_latest(subject=subject, fields=set(), recorded_by=later) == ([], ledger_seq)
    assert ledger_seq == EvidenceEntry.objects.order_by("seq").last().seq


def _key(view):
    return (view.field, view.evidence_id)


def test_a_tie_goes_to_the_greater_id_in_code_point_order_whatever_the_collation(db):
    """Two entries stating one value at one time: the index keeps the greater evidence id as
    Python orders ids ("ev-a" after "ev-B"), as the ledger's readers and a rebuild do, even on
    a database whose collation orders them the other way (ICU's, made the column's here for
    the test's transaction)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite compares text by code point, as Python does")
    with connection.cursor() as cursor:
        cursor.execute(
            f"ALTER TABLE {EvidenceEntry._meta.db_table} "
            'ALTER COLUMN evidence_id TYPE varchar(100) COLLATE "und-x-icu"'
        )
    observed = timezone.now() - timedelta(minutes=5)
    for evidence_id in ("ev-a-tie", "ev-B-tie"):
        evidence_append(
            kind="observation",
            subject="acct-tie",
            field=FIELD,
            value="hold",
            source="case-ledger",
            observed_at=observed,
            evidence_id=evidence_id,
        )
    later = timezone.now() + timedelta(seconds=1)

    from_index, _ = evidence_latest(subject="acct-tie", fields={FIELD}, recorded_by=later)
    from_ledger = latest_per_value(
        evidence_as_of(subject="acct-tie", fields={FIELD}, recorded_by=later)
    )

    assert [view.evidence_id for view in from_ledger] == ["ev-a-tie"]
    assert from_index is not None
    assert [view.evidence_id for view in from_index] == ["ev-a-tie"]


def test_a_cut_off_before_the_latest_change_reads_the_ledger(db):
    first = evidence_append(
        kind="observation",
        subject="acct-cut",
        field=FIELD,
        value="hold",
        source="case-ledger",
        observed_at=timezone.now(),
    )
    assert evidence_latest(subject="acct-cut", fields={FIELD}, recorded_by=first.recorded_at)[0]
    before = first.recorded_at - timedelta(microseconds=1)
    assert evidence_latest(subject="acct-cut", fields={FIELD}, recorded_by=before) == (
        None,
        first.seq,
    )


def test_a_snapshot_issued_under_schema_1_replays_exactly(estate, agent, monkeypatch):
    """Snapshots issued before the index listed every supporting entry: replay keeps that."""
    account("acct-v1", history=5)
    # As before the index: the ledger read in full, every supporting entry listed.
    monkeypatch.setattr(reconcile_service, "evidence_latest", lambda **kwargs: (None, None))
    monkeypatch.setattr(
        reconcile_service.engine,
        "evaluate",
        functools.partial(engine.evaluate, schema_version="1"),
    )
    old = _reconcile(agent, "acct-v1").json()
    monkeypatch.undo()
    new = _reconcile(agent, "acct-v1").json()
    assert len(old["fields"][FIELD]["evidence"]) == 3  # every "hold" entry of the five
    assert len(new["fields"][FIELD]["evidence"]) == 1  # the latest of them
    for body in (old, new):
        snapshot = DecisionSnapshot.objects.get(snapshot_id=body["snapshot_id"])
        assert snapshot_replay(snapshot=snapshot, mode="as_recorded").exact
