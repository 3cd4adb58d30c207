"""A source declared again by load_contracts: a change that would break the active contracts
reading it is refused at its line; one that breaks nothing loads; changes are audited."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import Contract, ContractAction, Source
from tests.conftest import ESTATE
from tests.factories import write_yaml
from tests.reconcile_app.management.commands.test_load_contracts import (
    LAB_CONTRACT,
    LAB_SOURCE,
    load,
)


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        # The active 7.3 reads collections_status from case-service.
        ("fact_classes: [collections_status]", "fact_classes: [something_else]", 6, "keep it"),
        (
            "fact_classes: [collections_status]",
            "mode: event_sourced\nfact_classes: [collections_status]",
            6,
            "no reducer",
        ),
    ],
)
def test_a_source_reloaded_cannot_break_a_contract_in_force(db, tmp_path, old, new, line, words):
    load(ESTATE)
    text = (ESTATE / "case-service.yaml").read_text()
    assert old in text
    path = write_yaml(tmp_path, "case-service.yaml", text.replace(old, new))

    with pytest.raises(CommandError, match=words) as caught:
        load(path)

    assert str(caught.value).startswith(f"{path}:{line}: "), str(caught.value)
    source = Source.objects.get(name="case-service")
    assert (source.fact_classes, source.mode) == (["collections_status"], "live")


def test_a_source_changed_is_audited_with_what_it_was_and_an_unchanged_one_is_not(db, tmp_path):
    from reconcile_app.models import AuditEvent

    load(ESTATE)
    load(ESTATE)  # the same declarations again: nothing changed, nothing audited
    assert AuditEvent.objects.filter(action="source.load", object_ref="case-service").count() == 1
    text = (ESTATE / "case-service.yaml").read_text()
    slower = write_yaml(tmp_path, "case-service.yaml", text + "timeout_ms: 900\n")

    load(slower)

    event = AuditEvent.objects.filter(action="source.load", object_ref="case-service").first()
    assert event is not None and event.actor_name == "load_contracts"
    assert (event.before["options"], event.after["options"]) == ({}, {"timeout_ms": 900})


def test_an_estate_loaded_again_unchanged_loads_whatever_its_active_contracts_hold(db):
    # An install from before folded fields were refused to actions: its active letter still
    # writes one. Loading the same ledger declaration again changes nothing, so refuses nothing.
    load(ESTATE)
    letter = Contract.objects.get(decision_class="collections-letter", status="active")
    ContractAction.objects.filter(contract=letter).update(field="collections_eligible")

    output = load(ESTATE / "hardship-ledger.yaml")

    assert "source hardship-ledger: updated" in output


def test_a_draft_reading_a_field_does_not_hold_its_source(db, tmp_path):
    source = write_yaml(tmp_path, "lab.yaml", LAB_SOURCE)
    call_command(
        "load_contracts",
        "--draft",
        str(source),
        str(write_yaml(tmp_path, "lab-check.yaml", LAB_CONTRACT)),
        stdout=StringIO(),
    )
    narrower = write_yaml(tmp_path, "lab.yaml", LAB_SOURCE.replace("[level, flag]", "[level]"))

    load(narrower)

    assert Source.objects.get(name="lab-service").fact_classes == ["level"]
