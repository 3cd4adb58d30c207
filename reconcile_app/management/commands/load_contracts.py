from __future__ import annotations

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reconcile_app.errors import ContractFileError
from reconcile_app.limits import MAX_REASON_CHARACTERS, says_nothing
from reconcile_app.models import ContractActivation
from reconcile_app.services.contracts import contracts_load


class Command(BaseCommand):
    help = (
        "Load source, contract and memory class YAML files (or folders of them), all or "
        "nothing; then run each new contract version's release gates and activate it when "
        "they pass (--draft: load without activating). Exits non-zero when a version's gates "
        "fail: it stays a draft."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument(
            "--draft",
            action="store_true",
            help="load new contract versions as drafts; a reviewer activates them later",
        )
        parser.add_argument(
            "--rationale",
            default="",
            help="why these versions go live: recorded, with the file and the user who ran "
            "the load, on each version's load and activation",
        )

    def handle(
        self, *args: Any, paths: list[str], draft: bool, rationale: str, **options: Any
    ) -> None:
        if rationale and says_nothing(rationale):
            raise CommandError("--rationale says nothing: give the reason in words")
        if len(rationale) > MAX_REASON_CHARACTERS:
            raise CommandError(f"--rationale is at most {MAX_REASON_CHARACTERS:,} characters")
        try:
            report = contracts_load(
                paths=paths,
                activate=not draft,
                rationale=rationale.strip(),
                run_by=_operating_system_user(),
            )
        except ContractFileError as exc:
            raise CommandError(str(exc)) from exc
        for name in report.sources_created:
            self.stdout.write(f"source {name}: created")
        for name in report.sources_updated:
            self.stdout.write(f"source {name}: updated")
        for name in report.classes_created:
            self.stdout.write(f"memory class {name}: created")
        for name in report.classes_updated:
            self.stdout.write(f"memory class {name}: updated")
        for label in report.contracts_created:
            self.stdout.write(f"contract {label}: loaded{' as a draft' if draft else ''}")
        for label in report.contracts_unchanged:
            self.stdout.write(f"contract {label}: unchanged")
        for activation in report.activations:
            self._activation_report(activation)
        if report.refused:
            labels = ", ".join(str(item.contract) for item in report.refused)
            raise CommandError(f"release gates failed; left as drafts: {labels}")

    def _activation_report(self, activation: ContractActivation) -> None:
        contract = activation.contract
        verdict = (
            f"active (replaces {activation.replaced_version})"
            if activation.status == "activated" and activation.replaced_version
            else "active"
            if activation.status == "activated"
            else f"{contract.status}: {activation.detail}"
        )
        self.stdout.write(f"contract {contract}: level {activation.level}, {verdict}")
        for gate in activation.gates:
            self.stdout.write(
                f"  gate {gate['name']:<24} {gate['status']:<13} {gate['duration_ms']:>6} ms  "
                f"{gate['detail']}"
            )


def _operating_system_user() -> str:
    """Who ran the command, as the machine knows them ("" where it cannot say: a container
    user with no name)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""
