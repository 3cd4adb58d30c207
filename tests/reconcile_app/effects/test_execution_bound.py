"""An unknown outcome is `not_executed` only when the owner can no longer execute it.

"Not in the owner's ledger, target unchanged" proves nothing while the command may still be
running there: live, an owner taking 4 to 6 s to commit was asked 1 s after a 2 s timeout, the
effect was recorded not_executed ("proven not to have happened"), and the owner then wrote
the record. A source publishes how long it may take (`execution_bound_seconds`, seed 000:
tool owners publish timeout contracts); until then the outcome stays unknown.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.errors import ContractFileError
from reconcile_app.models import Effect, Source
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.effects import effect_resolve_unknown
from reconcile_app.sources import LookupOutcome, LookupResult, adapter_for
from reconcile_app.sources.http import HttpAdapter
from sandbox_app.adapter import SandboxAdapter
from tests.factories import write_yaml
from tests.reconcile_app.effects.test_resolution_evidence import never_executed  # noqa: F401
from tests.reconcile_app.services.test_contracts import TOKEN_LINE, source_file


def publish_bound(effect: Effect, seconds: int) -> None:
    source = effect.source
    source.options = {**source.options, "execution_bound_seconds": seconds}
    source.save(update_fields=["options"])


def sent_ago(effect: Effect, seconds: int) -> None:
    assert effect.sent_at is not None
    Effect.objects.filter(pk=effect.pk).update(sent_at=effect.sent_at - timedelta(seconds=seconds))


def test_no_key_and_an_unchanged_target_are_no_proof_before_the_owners_bound(never_executed):
    publish_bound(never_executed, 60)

    early = effect_resolve_unknown(effect_id=never_executed.pk)

    assert early.status == "unknown"
    assert "may still execute it until" in early.last_check_error
    assert early.next_check_at <= early.sent_at + timedelta(seconds=61)
    sent_ago(early, 61)
    assert effect_resolve_unknown(effect_id=never_executed.pk).status == "not_executed"


def test_the_next_check_comes_as_the_bound_passes_not_a_backoff_later(never_executed):
    publish_bound(never_executed, 3)
    Effect.objects.filter(pk=never_executed.pk).update(resolution_attempts=4)  # a 600 s backoff

    early = effect_resolve_unknown(effect_id=never_executed.pk)

    assert early.status == "unknown"
    assert early.next_check_at <= early.sent_at + timedelta(seconds=5)


def test_an_owner_reached_over_http_that_publishes_no_bound_is_given_five_minutes(estate):
    owner = Source(name="owner-http", adapter="http", options={})
    assert adapter_for(owner).execution_bound_seconds() == 300
    assert isinstance(adapter_for(owner), HttpAdapter)
    owner.options = {"execution_bound_seconds": 0}
    assert adapter_for(owner).execution_bound_seconds() == 0


@pytest.mark.parametrize("bound", ["-1", "1.5", "'30'", "true", "86401"])
def test_a_bound_that_is_no_whole_number_of_seconds_up_to_a_day_is_refused(db, tmp_path, bound):
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "consistency:", f"execution_bound_seconds: {bound}\nconsistency:"
    )
    with pytest.raises(ContractFileError) as refused:
        contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text))])

    assert refused.value.line == TOKEN_LINE + 1
    assert "execution_bound_seconds" in refused.value.reason


def test_a_published_bound_is_kept(db, tmp_path):
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "consistency:", "execution_bound_seconds: 45\nconsistency:"
    )
    contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text))])

    assert Source.objects.get(name="owner-http").options["execution_bound_seconds"] == 45


def test_past_the_bound_an_outcome_still_unsettled_keeps_its_backoff(never_executed, monkeypatch):
    # The sandbox's bound (0) passed as it was sent: an owner whose ledger cannot answer is
    # asked again a backoff later (600 s after four attempts), not on every sweep for ever.
    monkeypatch.setattr(
        SandboxAdapter,
        "lookup_effect",
        lambda self, key: LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail="down"),
    )
    Effect.objects.filter(pk=never_executed.pk).update(resolution_attempts=4)
    before = timezone.now()

    later = effect_resolve_unknown(effect_id=never_executed.pk)

    assert later.status == "unknown"
    assert later.next_check_at >= before + timedelta(seconds=600)
