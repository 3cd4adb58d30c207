from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reconcile_app.errors import ContractFileError
from reconcile_app.services.contracts import contracts_load


class Command(BaseCommand):
    help = "Load source, contract and memory class YAML files (or folders of them). All or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")

    def handle(self, *args: Any, paths: list[str], **options: Any) -> None:
        try:
            report = contracts_load(paths=paths)
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
            self.stdout.write(f"contract {label}: loaded")
        for label in report.contracts_unchanged:
            self.stdout.write(f"contract {label}: unchanged")
