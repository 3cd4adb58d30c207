"""Load source, contract and memory class files (`load_contracts`). All-or-nothing per call.

A (decision class, version) pair is immutable once loaded: loading identical content again is
a no-op, different content under the same pair is refused. Sources are configuration and are
updated in place. Validation (contract_schema) happens before anything is written.

A new version is written as a `draft`. Unless the caller loads drafts only, each new (or
still draft) version then goes through an activation (services/contract_lifecycle): its
release gates run, and it goes live, retiring the one it replaces, or stays a draft with the
gate report. The files load all or nothing; each activation stands on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection, transaction

from reconcile_app.choices import ActivationStatus, ContractStatus
from reconcile_app.errors import ContractFileError, DomainError
from reconcile_app.models import (
    Contract,
    ContractAction,
    ContractActivation,
    ContractField,
    MemoryClass,
    PolicyRule,
    Source,
)
from reconcile_app.services.audit import audit_record
from reconcile_app.services.contract_files import parse_file, yaml_paths
from reconcile_app.services.contract_lifecycle import (
    Deployer,
    contract_activate_now,
)
from reconcile_app.services.contract_schema import contract_values
from reconcile_app.services.memory_class_schema import memory_class_values
from reconcile_app.services.source_reload import declaration_save, source_reload_check
from reconcile_app.services.source_schema import source_values


@dataclass
class LoadReport:
    sources_created: list[str] = field(default_factory=list)
    sources_updated: list[str] = field(default_factory=list)
    contracts_created: list[str] = field(default_factory=list)
    contracts_unchanged: list[str] = field(default_factory=list)
    classes_created: list[str] = field(default_factory=list)
    classes_updated: list[str] = field(default_factory=list)
    # One per version that was to go live: activated, or refused with its gate report.
    activations: list[ContractActivation] = field(default_factory=list)

    @property
    def refused(self) -> list[ContractActivation]:
        return [item for item in self.activations if item.status != ActivationStatus.ACTIVATED]


# The advisory lock of contract loads ("LOAD" in ASCII): none of the product's other
# advisory locks uses it.
CONTRACT_LOAD_LOCK = 0x4C4F4144


@contextmanager
def _loads_in_turn() -> Iterator[None]:
    """Loads take turns, each from its first read to its last activation (a session lock,
    held across the transaction and the gates after it). Two deploys of one new version both
    found it missing and inserted it, the second breaking the (class, version) unique index;
    the second, finding it a draft, then met the first's activation and reported its gates
    failed and the version left a draft, while it went live. Now the second finds it as the
    first left it. SQLite's IMMEDIATE transactions serialise writers already."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [CONTRACT_LOAD_LOCK])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [CONTRACT_LOAD_LOCK])


def contracts_load(
    *, paths: list[str], activate: bool = True, rationale: str = "", run_by: str = ""
) -> LoadReport:
    """Validate every file first, write everything in one transaction, then (unless
    `activate` is off) put each new or still-draft version through its release gates.

    `rationale` (why these versions go live) and `run_by` (who ran the load: the command
    passes the operating system's user) go on each version's load and activation, after the
    file it came from: the audit trail says who and why for a deploy too."""
    with _loads_in_turn():
        return _contracts_load(paths=paths, activate=activate, rationale=rationale, run_by=run_by)


def _contracts_load(*, paths: list[str], activate: bool, rationale: str, run_by: str) -> LoadReport:
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
        source_reload_check(item, values, stored=known.get(values["name"]))
        known[values["name"]] = values
        sources_parsed.append((item, values))
    contracts_parsed = [(item, contract_values(item, known)) for item in contract_files]
    classes_parsed = [(item, memory_class_values(item)) for item in class_files]

    report = LoadReport()
    to_activate: list[Contract] = []
    deployer = Deployer()
    with transaction.atomic():
        for item, values in sources_parsed:
            name = values.pop("name")
            created = declaration_save(
                Source,
                "source",
                name=name,
                values=values,
                reason=_deploy_reason(f"loaded from {item.path}", rationale, run_by),
                actor=deployer,
            )
            (report.sources_created if created else report.sources_updated).append(name)
        for item, values in classes_parsed:
            name = values.pop("name")
            created = declaration_save(
                MemoryClass,
                "memory_class",
                name=name,
                values=values,
                reason=_deploy_reason(f"loaded from {item.path}", rationale, run_by),
                actor=deployer,
            )
            (report.classes_created if created else report.classes_updated).append(name)
        sources = {source.name: source for source in Source.objects.all()}
        new_versions: dict[str, str] = {}
        for item, values in contracts_parsed:
            label = f"{values['decision_class']}@{values['version']}"
            existing = Contract.objects.filter(
                decision_class=values["decision_class"], version=values["version"]
            ).first()
            # A draft loaded again goes live too: it counts as new.
            going_live = existing is None or existing.status == ContractStatus.DRAFT
            earlier = (
                new_versions.setdefault(values["decision_class"], label) if going_live else label
            )
            if activate and earlier != label:
                # Each would go live in turn, the last file's (by name) staying: "7.9" after
                # "7.10". One new version of a class per load says which one is meant (as
                # drafts, for reviewers to choose from, any number may load).
                raise item.fail(
                    f"{label} and {earlier} are both new: load one new version of a class at "
                    "a time",
                    "version",
                )
            if existing is not None:
                if existing.content_hash != values["content_hash"]:
                    raise item.fail(
                        f"{label} is already loaded with different content; a loaded version "
                        "is immutable, so publish a new version",
                        "version",
                    )
                report.contracts_unchanged.append(label)
                if existing.status == ContractStatus.DRAFT:
                    to_activate.append(existing)
                continue
            contract = Contract.objects.create(
                status=ContractStatus.DRAFT,
                obligation=values["obligation"],
                level=values["level"],
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
            to_activate.append(contract)
            audit_record(
                actor=Deployer(),
                action="contract.load",
                object_kind="contract",
                object_ref=label,
                reason=_deploy_reason(f"loaded from {item.path}", rationale, run_by),
                after={"status": ContractStatus.DRAFT.value, "level": values["level"]},
            )
    if activate:
        for contract in to_activate:
            try:
                activation = contract_activate_now(
                    contract=contract,
                    rationale=_deploy_reason(
                        f"loaded by load_contracts from {contract.source_path}", rationale, run_by
                    ),
                )
            except DomainError as exc:
                # Another activation of the class is running (a reviewer's): this version
                # stays a draft and is reported with the rest, not a traceback midway. The
                # row is not saved: it says why no activation was started.
                activation = ContractActivation(
                    contract=contract,
                    status=ActivationStatus.FAILED,
                    level=contract.level,
                    detail=f"not started: {exc.detail}",
                )
            report.activations.append(activation)
    return report


def _deploy_reason(what: str, rationale: str, run_by: str) -> str:
    return what + (f", run by {run_by}" if run_by else "") + (f": {rationale}" if rationale else "")
