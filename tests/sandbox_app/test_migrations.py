"""The sandbox's models moved out of reconcile_app in Django's state only: a database migrated
before the move keeps its tables and every row, and sandbox_app reads them after it; the
authorities registered before the authority history existed start it."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from sandbox_app.models import SandboxAuthorityChange, SandboxEffect, SandboxRecord
from sandbox_app.services import (
    sandbox_authority_read,
    sandbox_effect_lookup,
    sandbox_record_read,
)
from tests.migrations import migrated_back_to

BEFORE_THE_MOVE = [("reconcile_app", "0011_contract_status_and_action_values")]


@pytest.mark.django_db(transaction=True)
def test_rows_written_before_the_move_are_read_by_sandbox_app_after_it():
    content_types = {
        model: ContentType.objects.get_for_model(model).pk
        for model in (SandboxRecord, SandboxEffect)
    }
    now = timezone.now()
    with migrated_back_to(BEFORE_THE_MOVE) as old:
        old.get_model("reconcile_app", "SandboxRecord").objects.create(
            source="case-service",
            subject="acct-before",
            field="collections_status",
            value="hold",
            version=42,
            valid_from=now,
            recorded_at=now,
        )
        old.get_model("reconcile_app", "SandboxEffect").objects.create(
            source="case-service",
            idempotency_key="k-before",
            fingerprint="f" * 64,
            receipt={"receipt_id": "rcpt-before", "resulting_version": 42},
        )
        old_types = old.get_model("contenttypes", "ContentType").objects
        assert old_types.filter(app_label="reconcile_app", model="sandboxrecord").exists()

    read = sandbox_record_read(
        source="case-service", subject="acct-before", field="collections_status"
    )
    assert (read.value, read.version) == ("hold", 42)
    assert sandbox_effect_lookup(source="case-service", idempotency_key="k-before") == {
        "receipt_id": "rcpt-before",
        "resulting_version": 42,
    }
    # The content types moved with the models (same rows), so nothing points at a stale one.
    ContentType.objects.clear_cache()
    assert {
        model: ContentType.objects.get_for_model(model).pk
        for model in (SandboxRecord, SandboxEffect)
    } == content_types
    assert not ContentType.objects.filter(app_label="reconcile_app", model__startswith="sandbox")


@pytest.mark.django_db(transaction=True)
def test_authorities_registered_before_history_was_kept_start_their_history():
    with migrated_back_to([("sandbox_app", "0001_initial")]) as old:
        registered = old.get_model("sandbox_app", "SandboxAuthority").objects.create(
            source="eval-registry",
            fact_key="baseline.math-eval",
            owner="eval-registry",
            source_revision="registry@r18",
        )

    (change,) = SandboxAuthorityChange.objects.all()
    assert (change.source, change.fact_key, change.owner, change.source_revision) == (
        "eval-registry",
        "baseline.math-eval",
        "eval-registry",
        "registry@r18",
    )
    assert change.at == registered.updated_at
    # From then on the owner answers as_of questions from it.
    then = sandbox_authority_read(
        source="eval-registry", fact_key="baseline.math-eval", as_of=registered.updated_at
    )
    assert then.source_revision == "registry@r18"
