from __future__ import annotations

import json
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.logs import request_id_var
from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.runs import drill_run_begin, drill_run_execute
from drills_app.scenarios import SCENARIO_NAMES, DrillParameters
from reconcile_app.errors import DomainError
from reconcile_app.management.command_runner import command_runner

METRICS = (
    ("stale_memory_escapes", "stale-memory escape rate"),
    ("unsupported_authorisations", "unsupported-authorisation rate"),
    ("duplicate_effects", "duplicate-effect rate"),
    ("silent_failures", "silent failures (postcondition absent, success believed)"),
    ("false_refusals", "false refusals"),
)


def _share(figures: dict[str, Any], name: str) -> str:
    exposed = figures[f"{name}_exposed"]
    if not exposed:
        return f"{figures[name]}" if figures[name] else "·"
    return f"{figures[name]}/{exposed}"


def _rate(figures: dict[str, Any], name: str) -> str:
    rate = figures[f"{name}_rate"]
    if rate is None:
        return f"— ({figures[name]})"
    return f"{rate:.1%} ({figures[name]}/{figures[f'{name}_exposed']})"


def _ms(value: dict[str, float] | None, missing: str) -> str:
    return f"{value['p50']:.1f} / {value['p95']:.1f} ms" if value else missing


def _replay(figures: dict[str, Any]) -> str:
    if not figures["replay_measured"]:
        return "not measured"
    if not figures["replays"]:
        return "—"
    return f"{figures['replays_exact']}/{figures['replays']} exact"


class Command(BaseCommand):
    help = (
        "Run seed 000's failure-injection suite on the drill's sandbox sources, on the full "
        "protocol and on a naive-memory baseline with the same inputs, then the poisoned-memory "
        "scenario; print and store the figures. Exits non-zero when the protocol lets a stale "
        "memory's effect escape, authorises on an unsupported premise, duplicates an effect, "
        "believes a failed effect succeeded, refuses what it should allow, fails a replay or "
        "lets a quarantined memory be cited."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--repeat", type=int, default=3, help="trials per scenario and arm")
        parser.add_argument(
            "--scenario",
            action="append",
            choices=SCENARIO_NAMES,
            help="run only this scenario (repeatable); default: all",
        )
        parser.add_argument("--json", action="store_true", help="print the stored results")
        parser.add_argument(
            "--reason",
            default="run from the command line",
            help="why it runs: on the audit trail (drill.start) with the account that ran it",
        )

    def handle(
        self, *args: Any, repeat: int, scenario: list[str] | None, reason: str, **options: Any
    ) -> None:
        parameters = DrillParameters(repeat=repeat, scenarios=tuple(scenario or SCENARIO_NAMES))
        # One id for the whole run, as a console start has its request's: the rows the drill
        # writes as the system (its quarantines, what it closes) lead back to this start.
        carried = request_id_var.set(uuid.uuid4().hex)
        try:
            run = self._run(parameters, reason)
        finally:
            request_id_var.reset(carried)
        if run.status != DrillRunStatus.COMPLETE:
            raise CommandError(f"drill run #{run.pk} failed: {run.error}")
        report = run.results
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, default=str))
        else:
            self._print(run.pk, report)
        if not report["passed"]:
            raise CommandError("the protocol failed the drill: " + "; ".join(report["failures"]))

    def _run(self, parameters: DrillParameters, reason: str) -> DrillRun:
        try:
            parameters.check()
            run = drill_run_begin(
                kind=DrillRunKind.DRILL,
                parameters=parameters.as_dict(),
                reason=reason,
                actor=command_runner("drill"),
                request_id=request_id_var.get(),
            )
        except (ValueError, DomainError) as exc:
            raise CommandError(str(exc)) from exc
        return drill_run_execute(run_id=run.pk)

    def _print(self, run_id: int, report: dict[str, Any]) -> None:
        write = self.stdout.write
        scenarios = report["scenarios"]
        write(
            f"drill run #{run_id} (subjects drill-{report['tag']}-*): "
            f"{len(scenarios) + ('poisoned_memory' in report)} scenarios x "
            f"{report['parameters']['repeat']} trials, protocol and naive baseline on the same "
            f"inputs, {report['elapsed_seconds']:.1f}s\n"
        )
        closed = report.get("closed") or {}
        write(
            f"closed what the drill left open in the operators' queues: "
            f"{closed.get('escalations', 0)} escalations rejected, "
            f"{closed.get('contradictions', 0)} contradictions resolved\n"
        )
        header = (
            f"{'scenario':<28}{'arm':<10}{'escape':>8}{'unsupp':>8}{'dup':>6}{'silent':>8}"
            f"{'f.ref':>7}{'reconcile p50/p95':>22}{'unknown→resolved':>20}  replay"
        )
        write(header)
        write("-" * len(header))
        for row in scenarios:
            for arm in ("protocol", "baseline"):
                figures = row[arm]
                unknown = figures["unknown_outcomes"]
                resolved = (
                    _ms(figures["unknown_resolution_ms"], "")
                    if figures["unknown_outcomes_resolved"]
                    else (f"{unknown} never" if unknown else "·")
                )
                write(
                    f"{row['name'] if arm == 'protocol' else '':<28}{arm:<10}"
                    f"{_share(figures, 'stale_memory_escapes'):>8}"
                    f"{_share(figures, 'unsupported_authorisations'):>8}"
                    f"{_share(figures, 'duplicate_effects'):>6}"
                    f"{_share(figures, 'silent_failures'):>8}"
                    f"{_share(figures, 'false_refusals'):>7}"
                    f"{_ms(figures['reconcile_latency_ms'], '—'):>22}{resolved:>20}  "
                    f"{_replay(figures)}"
                )
        write("\nwhat each arm did (most common trial):")
        for row in scenarios:
            write(f"  {row['name']}: {row['title']}")
            for arm in ("protocol", "baseline"):
                write(f"    {arm:<9}{row[arm]['outcome']}")
        if "poisoned_memory" in report:
            self._print_poisoned(report["poisoned_memory"])
        protocol, baseline = report["totals"]["protocol"], report["totals"]["baseline"]
        write(f"\n{'total':<58}{'protocol':<26}baseline")
        for name, label in METRICS:
            write(f"{label:<58}{_rate(protocol, name):<26}{_rate(baseline, name)}")
        never = f"never: {baseline['unknown_outcomes']} taken as failed"
        write(
            f"{'unknown-outcome resolution time p50 / p95':<58}"
            f"{_ms(protocol['unknown_resolution_ms'], '—'):<26}"
            f"{_ms(baseline['unknown_resolution_ms'], never)}"
        )
        write(
            f"{'reconciliation latency p50 / p95':<58}"
            f"{_ms(protocol['reconcile_latency_ms'], '—'):<26}— (no reconciliation)"
        )
        write(f"{'exact replay success':<58}{_replay(protocol):<26}— (nothing to replay)")
        verdict = "PASSED" if report["passed"] else "FAILED: " + "; ".join(report["failures"])
        write(f"\nprotocol: {verdict}")
        expected = "yes" if report["baseline_failed_where_expected"] else "NO"
        write(f"baseline failed where the seed says it does: {expected}")

    def _print_poisoned(self, section: dict[str, Any]) -> None:
        """The lineage scenario has no baseline arm: a naive memory has no lineage to list."""
        write = self.stdout.write
        write(f"\n{section['name']}: {section['title']} ({section['trials']} trials)")
        write(
            f"  blast radius: {section['snapshots_fed']} snapshots and {section['effects_fed']} "
            f"effects fed before the quarantine, "
            f"{'all listed' if section['blast_radius_complete'] else 'NOT all listed'}"
        )
        write(
            f"  after it: {section['later_decisions']} decisions, {section['later_citations']} "
            f"citing it ({section['later_downstream']} downstream only through effects it fed)"
        )
        write(f"  exact replay: {section['replays_exact']}/{section['replays']}")
        write(f"  protocol {section['outcome']}")
        for failure in section["failures"]:
            write(f"  FAILED: {failure}")
