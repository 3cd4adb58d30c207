"""A deploy says who and why too: `load_contracts --rationale` and the operating system's user
go on each version's load and activation, beside the file it came from (they said only
"loaded by load_contracts from PATH")."""

from __future__ import annotations

import getpass
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import AuditEvent, Contract, ContractActivation
from tests.conftest import COLLECTIONS, ESTATE
from tests.factories import write_yaml
from tests.reconcile_app.api.test_contract_lifecycle import DENIES_COLLECT

WHY = "Standard collections are paused during the audit (ticket OPS-112)."


def load(tmp_path, *flags: str) -> None:
    path = write_yaml(tmp_path, "next.yaml", DENIES_COLLECT)
    call_command("load_contracts", str(path), *flags, stdout=StringIO())


def test_the_rationale_and_who_ran_the_load_are_on_the_trail(estate, tmp_path, monkeypatch):
    monkeypatch.setattr(getpass, "getuser", lambda: "deploy-bot")

    load(tmp_path, "--rationale", WHY)

    version = Contract.objects.get(decision_class=COLLECTIONS, version="7.4")
    activation = ContractActivation.objects.get(contract=version)
    assert activation.rationale.endswith(f", run by deploy-bot: {WHY}")
    assert activation.rationale.startswith("loaded by load_contracts from ")
    loaded = AuditEvent.objects.get(action="contract.load", object_ref=f"{COLLECTIONS}@7.4")
    assert loaded.reason.endswith(f", run by deploy-bot: {WHY}")
    activated = AuditEvent.objects.get(action="contract.activate", object_ref=f"{COLLECTIONS}@7.4")
    assert WHY in activated.reason


def test_a_source_or_memory_class_changed_says_who_and_why_too(estate, tmp_path, monkeypatch):
    # A memory class's admission decides whether a reviewer other than the writer must
    # promote its memories: its change is as much a deploy's decision as a contract's, and
    # its row said only "loaded from PATH" (the rationale and the user were dropped).
    monkeypatch.setattr(getpass, "getuser", lambda: "deploy-bot")
    episodic = (ESTATE / "memory-classes" / "episodic.yaml").read_text()
    source = (ESTATE / "case-service.yaml").read_text()
    write_yaml(
        tmp_path, "episodic.yaml", episodic.replace("admission: direct", "admission: review")
    )
    write_yaml(tmp_path, "case-service.yaml", source + "timeout_ms: 900\n")

    call_command("load_contracts", str(tmp_path), "--rationale", WHY, stdout=StringIO())

    for action, name in (("memory_class.load", "episodic"), ("source.load", "case-service")):
        row = AuditEvent.objects.filter(action=action, object_ref=name).first()
        assert row is not None and row.reason.startswith(f"loaded from {tmp_path}"), action
        assert row.reason.endswith(f", run by deploy-bot: {WHY}"), row.reason


def test_without_a_rationale_the_user_is_still_named(estate, tmp_path, monkeypatch):
    monkeypatch.setattr(getpass, "getuser", lambda: "deploy-bot")

    load(tmp_path)

    activation = ContractActivation.objects.get(contract__version="7.4")
    assert activation.rationale.endswith(", run by deploy-bot")


def test_a_user_the_machine_cannot_name_is_left_out(estate, tmp_path, monkeypatch):
    def nameless() -> str:
        raise OSError("No username set in the environment")

    monkeypatch.setattr(getpass, "getuser", nameless)

    load(tmp_path)

    assert ", run by" not in ContractActivation.objects.get(contract__version="7.4").rationale


@pytest.mark.parametrize("rationale", ["\u200b\u200b", "x" * 4001])
def test_a_rationale_that_says_nothing_or_too_much_is_refused_before_loading(
    estate, tmp_path, rationale
):
    with pytest.raises(CommandError, match="--rationale"):
        load(tmp_path, "--rationale", rationale)

    assert not Contract.objects.filter(version="7.4").exists()
