"""Load source, contract and memory class files (`load_contracts`). All-or-nothing per call.

A (decision class, version) pair is immutable once loaded: loading identical content again is
a no-op, different content under the same pair is refused. Sources are configuration and are
updated in place. Loading a new version activates it and retires the one it replaces.
Validation (contract_schema) happens before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from reconcile_app.choices import ContractStatus
from reconcile_app.errors import ContractFileError
from reconcile_app.models import (
    Contract,
    ContractAction,
    ContractField,
    MemoryClass,
    PolicyRule,
    Source,
)
from reconcile_app.services.contract_files import parse_file, yaml_paths
from reconcile_app.services.contract_schema import contract_values, source_values
from reconcile_app.services.memory_class_schema import memory_class_values


@dataclass
class LoadReport:
    sources_created: list[str] = field(default_factory=list)
    sources_updated: list[str] = field(default_factory=list)
    contracts_created: list[str] = field(default_factory=list)
    contracts_unchanged: list[str] = field(default_factory=list)
    classes_created: list[str] = field(default_factory=list)
    classes_updated: list[str] = field(default_factory=list)


def contracts_load(*, paths: list[str]) -> LoadReport:
    """Validate every file first, then write everything in one transaction."""
    parsed = [parse_file(path) for path in yaml_paths(paths)]
    if not parsed:
        raise ContractFileError(", ".join(paths), None, "no YAML files found")
    source_files = [item for item in parsed if "source" in item.data]
    contract_files = [item for item in parsed if "decision_class" in item.data]
    class_files = [item for item in parsed if "memory_class" in item.data]
    for item in parsed:
        if item not in source_files and item not in contract_files and item not in class_files:
            raise item.fail(
                "neither a source (`source:`), a contract (`decision_class:`) nor a memory class "
                "(`memory_class:`)"
            )
    known = {
        source.name: {"fact_classes": source.fact_classes, "mode": source.mode}
        for source in Source.objects.all()
    }
    sources_parsed = []
    for item in source_files:
        values = source_values(item)
        known[values["name"]] = values
        sources_parsed.append(values)
    contracts_parsed = [(item, contract_values(item, known)) for item in contract_files]
    classes_parsed = [memory_class_values(item) for item in class_files]

    report = LoadReport()
    with transaction.atomic():
        for values in sources_parsed:
            name = values.pop("name")
            _, created = Source.objects.update_or_create(name=name, defaults=values)
            (report.sources_created if created else report.sources_updated).append(name)
        for values in classes_parsed:
            name = values.pop("name")
            _, created = MemoryClass.objects.update_or_create(name=name, defaults=values)
            (report.classes_created if created else report.classes_updated).append(name)
        sources = {source.name: source for source in Source.objects.all()}
        for item, values in contracts_parsed:
            label = f"{values['decision_class']}@{values['version']}"
            existing = Contract.objects.filter(
                decision_class=values["decision_class"], version=values["version"]
            ).first()
            if existing is not None:
                if existing.content_hash != values["content_hash"]:
                    raise item.fail(
                        f"{label} is already loaded with different content; a loaded version "
                        "is immutable, so publish a new version",
                        "version",
                    )
                report.contracts_unchanged.append(label)
                continue
            # A new version goes live at once, and the one it replaces stops authorising.
            Contract.objects.filter(
                decision_class=values["decision_class"], status=ContractStatus.ACTIVE
            ).update(status=ContractStatus.RETIRED)
            contract = Contract.objects.create(
                status=ContractStatus.ACTIVE,
                decision_class=values["decision_class"],
                version=values["version"],
                purpose=values["purpose"],
                policy_version=values["policy_version"],
                contradictions=values["contradictions"],
                commit_window_seconds=values["commit_window_seconds"],
                reducer=values["reducer"],
                document=values["document"],
                content_hash=values["content_hash"],
                source_path=str(Path(item.path)),
            )
            ContractField.objects.bulk_create(
                ContractField(
                    contract=contract,
                    name=spec["name"],
                    source=sources[spec["source"]],
                    required=spec["required"],
                    max_age_seconds=spec["max_age_seconds"],
                    evidence_required=spec["evidence_required"],
                    position=position,
                )
                for position, spec in enumerate(values["fields"])
            )
            ContractAction.objects.bulk_create(
                ContractAction(
                    contract=contract, name=name, field=action.field, values=action.values
                )
                for name, action in values["actions"].items()
            )
            PolicyRule.objects.bulk_create(
                PolicyRule(contract=contract, **rule) for rule in values["rules"]
            )
            report.contracts_created.append(label)
    return report
