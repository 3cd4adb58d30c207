"""What a new contract version would decide on the class's latest decisions (services/
outcome_preview): a version turning allow into deny passes every release gate, so the
reviewer is shown the change before activating it."""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command

from reconcile_app.models import Contract, ContractField
from reconcile_app.reconciliation import engine
from reconcile_app.selectors.contracts import _contract_spec
from reconcile_app.services.outcome_preview import outcome_preview
from sandbox_app.services import sandbox_fault_add
from tests.conftest import COLLECTIONS
from tests.factories import write_yaml
from tests.reconcile_app.api.test_contract_lifecycle import DENIES_COLLECT
from tests.reconcile_app.effects.conftest import collectible, reconcile  # noqa: F401
from tests.reconcile_app.effects.test_gate import TIGHTENED


def version(name: str) -> Contract:
    return Contract.objects.get(decision_class=COLLECTIONS, version=name)


def draft(tmp_path, text: str) -> Contract:
    call_command(
        "load_contracts", str(write_yaml(tmp_path, "next.yaml", text)), "--draft", stdout=StringIO()
    )
    return version("7.4")


def test_a_version_that_denies_what_was_allowed_shows_each_change(
    collectible, agent, tmp_path, django_assert_num_queries
):
    for _ in range(3):
        assert reconcile(agent)["decision"]["result"] == "allow"
    candidate = draft(tmp_path, DENIES_COLLECT)
    active = version("7.3")
    outcome_preview(active, candidate)  # each version's spec, once per process

    with django_assert_num_queries(2):  # the decisions, the evidence they cite
        preview = outcome_preview(active, candidate)

    assert (preview.compared, preview.changed) == (3, 3)
    assert preview.transitions == [("allow", "deny", 3)]
    first = preview.shown[0]
    assert first.proposal == "release_collections_hold"
    assert first.before.startswith("allow") and first.after.startswith("deny")
    assert "permitting ['release_collections_hold', 'retain_manual_review']" in first.before
    assert first.after == "deny (hardship_hold)"


def test_the_same_version_changes_nothing(collectible, agent):
    reconcile(agent)
    active = version("7.3")

    preview = outcome_preview(active, active)

    assert (preview.compared, preview.changed, preview.shown) == (1, 0, [])
    assert preview.transitions == [("allow", "allow", 1)]


def test_a_version_with_a_longer_freshness_limit_allows_what_was_stale(
    collectible, agent, tmp_path
):
    # The owner vouches for its value as of 20 minutes ago: stale under 7.3's 300 s limit,
    # fresh under an hour's. Stored `stale`, the read was not judged again: "0 of 1".
    sandbox_fault_add(source="case-service", kind="lag", seconds=1200)
    assert reconcile(agent)["decision"]["result"] == "refuse"
    relaxed = draft(tmp_path, TIGHTENED.replace("max_age_seconds: 300", "max_age_seconds: 3600"))

    preview = outcome_preview(version("7.3"), relaxed)

    assert (preview.compared, preview.changed) == (1, 1)
    assert preview.transitions == [("refuse", "allow", 1)]
    # Allowed as 7.4 allows it: with the evidence the stale read had, though it cited none.
    assert preview.shown[0].after.startswith("allow (")


def test_a_read_stale_under_both_limits_stays_stale(collectible, agent, tmp_path):
    sandbox_fault_add(source="case-service", kind="lag", seconds=1200)
    reconcile(agent)
    candidate = draft(tmp_path, TIGHTENED.replace("max_age_seconds: 300", "max_age_seconds: 900"))

    preview = outcome_preview(version("7.3"), candidate)

    assert preview.transitions == [("refuse", "refuse", 1)]


@pytest.fixture
def spec_cache_cleared() -> Iterator[None]:
    """A loaded version never changes, so its spec is cached by row and hash; the test
    below changes one, and a later test may get the same row id back (SQLite reuses it)."""
    _contract_spec.cache_clear()
    yield
    _contract_spec.cache_clear()


def test_a_decision_that_did_not_read_a_field_the_version_reads_is_counted_apart(
    collectible, agent, tmp_path, spec_cache_cleared
):
    reconcile(agent)
    candidate = draft(tmp_path, DENIES_COLLECT)
    ContractField.objects.filter(contract=candidate, name="complaint_status").update(
        name="hardship_flag"
    )

    preview = outcome_preview(version("7.3"), version("7.4"))

    assert (preview.compared, preview.changed) == (0, 0)
    assert preview.unread == {"hardship_flag": 1}


def test_a_decision_the_engine_cannot_decide_again_is_counted_not_raised(
    collectible, agent, monkeypatch, caplog
):
    reconcile(agent)
    reconcile(agent)
    real = engine.evaluate
    calls = iter(range(100))

    def first_fails(**kwargs):
        if next(calls) == 0:
            raise KeyError("binding")
        return real(**kwargs)

    monkeypatch.setattr(engine, "evaluate", first_fails)

    preview = outcome_preview(version("7.3"), version("7.3"))

    assert (preview.compared, preview.failed) == (1, 1)
    assert "could not be decided again" in caplog.text


def test_a_slow_rule_stops_the_preview_at_its_budget(collectible, agent, tmp_path):
    # ~0.5 s an evaluation: 50 decisions held the diff page 22 s, a slower rule past
    # gunicorn's 30 s (the worker was killed, 500). Those not reached in time are counted.
    for _ in range(3):
        reconcile(agent)
    numbers = "[" + ", ".join(str(number) for number in range(100)) + "]"
    loop = f"{numbers}.exists(a, {numbers}.exists(b, {numbers}.exists(c, a + b + c > 500)))"
    slow = draft(
        tmp_path, TIGHTENED.replace("'fields.collections_status == \"hold\"'", f"'{loop}'")
    )

    preview = outcome_preview(version("7.3"), slow, budget_seconds=0.05)

    assert (preview.compared, preview.unfinished) == (1, 2)
