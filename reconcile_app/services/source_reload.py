"""A source or memory class declared again: it must keep serving the contracts in force, and
the change is audited like a contract's.

A contract is checked against its sources when it is loaded; a source reloaded later could
take a field away from an active contract (which then went on reading it from an owner that
no longer owns it) or turn event-sourced under a contract with no reducer to fold it (every
decision refused), with no gate and no audit row.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Model

from reconcile_app.choices import ContractStatus
from reconcile_app.models import ContractAction, ContractField
from reconcile_app.reducers import reducer_named
from reconcile_app.services.audit import audit_record
from reconcile_app.services.contract_files import ParsedFile


def source_reload_check(
    item: ParsedFile, values: dict[str, Any], stored: dict[str, Any] | None
) -> None:
    """Refuse, at the file's line, a change that breaks the active contracts reading the
    source: a field it no longer owns, or a turn to event-sourced they cannot fold. `stored`
    is the source as loaded before (`fact_classes`, `mode`; None: a new source). A
    declaration that changes neither is never refused (an estate loaded again as it was)."""
    name = values["name"]
    if stored is None:
        return
    turns_folded = values["mode"] == "event_sourced" and stored["mode"] != "event_sourced"
    dropped = set(stored["fact_classes"]) - set(values["fact_classes"])
    if not (turns_folded or dropped):
        return
    # Active versions only: a draft or a retired one serves no decision until it is made
    # active, and then fails closed on a field its source no longer owns.
    reading = ContractField.objects.filter(
        source__name=name, contract__status=ContractStatus.ACTIVE
    ).select_related("contract")
    for field in reading:
        contract = field.contract
        if field.name in dropped:
            raise item.fail(
                f"{contract} reads {field.name} from {name}: keep it in fact_classes until a "
                "version reading it elsewhere is live",
                "fact_classes",
            )
        if not turns_folded:
            continue
        reducer = reducer_named(contract.reducer) if contract.reducer else None
        if reducer is None or field.name not in reducer.fields:
            raise item.fail(
                f"{contract} reads {field.name} from {name} with no reducer folding it: "
                "event_sourced would refuse its every decision",
                "mode",
            )
        if ContractAction.objects.filter(contract=contract, field=field.name).exists():
            raise item.fail(
                f"{contract} writes {field.name}: an event-sourced owner takes events, not writes",
                "mode",
            )


def declaration_save(
    model: type[Model], kind: str, *, name: str, values: dict[str, Any], reason: str, actor: Any
) -> bool:
    """Create or update one source or memory class (True when created); a change is audited
    with what it was and what it is (`source.load`, `memory_class.load`: `kind`), and with
    the load's `reason`: the file, who ran the load and why, as a contract's load says."""
    before = model._default_manager.filter(name=name).values(*values).first()
    _, created = model._default_manager.update_or_create(name=name, defaults=values)
    if before != values:
        audit_record(
            actor=actor,
            action=f"{kind}.load",
            object_kind=kind,
            object_ref=name,
            reason=reason,
            before=before,
            after=values,
        )
    return created
