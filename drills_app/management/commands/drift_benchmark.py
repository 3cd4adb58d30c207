from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.drift import DriftParameters
from drills_app.runs import drill_run_execute, drill_run_start
from reconcile_app.errors import DomainError

DEFAULTS = DriftParameters()
OPTIONS = {
    "episodes": "seeded episodes per horizon",
    "min_horizon": "fewest compactions",
    "max_horizon": "most compactions",
    "interval": "steps between compactions",
    "mutation_rate": "probability that a step changes one field",
    "omission_rate": "probability that a compaction omits an update",
    "seed": "seed of the episodes' random streams",
    "control_omission_rate": "omission rate of the negative control (mutation 0)",
}


def _pct(value: float) -> str:
    return f"{value:.1%}"


class Command(BaseCommand):
    help = (
        "Seed 002's drift benchmark: a carried narrative that compacts every INTERVAL steps "
        "against reconstruction by reducer, per horizon; plus the paired-history invariance "
        "test and the negative control. Prints the table and stores the run."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        for item in fields(DriftParameters):
            default = getattr(DEFAULTS, item.name)
            parser.add_argument(
                "--" + item.name.replace("_", "-"),
                dest=item.name,
                type=type(default),
                default=default,
                help=f"{OPTIONS[item.name]} (default {default})",
            )
        parser.add_argument("--json", action="store_true", help="print the stored results")

    def handle(self, *args: Any, **options: Any) -> None:
        parameters = DriftParameters(
            **{item.name: options[item.name] for item in fields(DriftParameters)}
        )
        try:
            parameters.check()
            run = drill_run_start(
                kind=DrillRunKind.DRIFT_BENCHMARK, parameters=parameters.as_dict()
            )
        except (ValueError, DomainError) as exc:
            raise CommandError(str(exc)) from exc
        run = drill_run_execute(run_id=run.pk)
        if run.status != DrillRunStatus.COMPLETE:
            raise CommandError(f"drift benchmark run #{run.pk} failed: {run.error}")
        if options["json"]:
            self.stdout.write(json.dumps(run.results, indent=2))
        else:
            self._print(run.pk, run.results)
        failed = [name for name, ok in run.results["checks"].items() if not ok]
        if failed:
            # Reconstruction is exact by construction: a failed check is a bug, not a finding.
            raise CommandError(f"drift benchmark checks failed: {', '.join(failed)}")

    def _print(self, run_id: int, results: dict[str, Any]) -> None:
        write = self.stdout.write
        p = results["parameters"]
        write(
            f"drift benchmark run #{run_id}: {p['episodes']} seeded episodes per horizon (seed "
            f"{p['seed']}), compaction every {p['interval']} steps, mutation "
            f"{_pct(p['mutation_rate'])}, omission {_pct(p['omission_rate'])}\n"
        )
        header = (
            f"{'compactions':>12}{'steps':>7}{'stale checkpoints':>19}{'final narrative':>17}"
            f"{'checkpoint acc.':>17}{'reconstruction':>16}"
        )
        write(header)
        write("-" * len(header))
        for row in results["horizons"]:
            write(
                f"{row['horizon']:>12}{row['steps']:>7}{_pct(row['stale_checkpoint_rate']):>19}"
                f"{_pct(row['final_narrative_accuracy']):>17}"
                f"{_pct(row['average_checkpoint_accuracy']):>17}"
                f"{_pct(row['reconstruction_exact_rate']):>16}"
            )
        paired = results["paired_history"]
        write(
            f"\npaired histories (A: hold on → off; B: nothing; same end state), "
            f"{paired['trials']} trials at omission {_pct(paired['omission_rate'])}:"
        )
        write(
            f"  narrative violation rate {_pct(paired['narrative_violation_rate'])} "
            f"(expected {_pct(paired['expected_narrative_violation_rate'])}), reconstruction "
            f"{_pct(paired['reconstruction_violation_rate'])}"
        )
        control = results["negative_control"]
        write(
            f"negative control (mutation 0, omission {_pct(control['omission_rate'])}, "
            f"{control['horizon']} compactions): narrative {_pct(control['narrative_accuracy'])}, "
            f"reconstruction {_pct(control['reconstruction_exact_rate'])}, stale "
            f"{_pct(control['stale_checkpoint_rate'])}"
        )
        seed = results["seed_reference"]
        rows = {str(row["horizon"]): row for row in results["horizons"]}
        comparison = ", ".join(
            f"{horizon} compactions {_pct(rows[horizon]['stale_checkpoint_rate'])} (seed "
            f"{_pct(rate)})"
            for horizon, rate in seed["stale_checkpoint_rate"].items()
            if horizon in rows
        )
        as_seed = (p["interval"], p["mutation_rate"], p["omission_rate"]) == (10, 0.22, 0.18)
        if comparison and as_seed:
            write(
                f"against the seed: stale checkpoints at {comparison}; paired violations "
                f"{_pct(paired['narrative_violation_rate'])} (seed "
                f"{_pct(seed['paired_history_violation_rate'])})"
            )
        failed = [name for name, ok in results["checks"].items() if not ok]
        write(
            f"checks: {'all hold' if not failed else 'FAILED ' + ', '.join(failed)} "
            f"({results['elapsed_seconds']:.2f}s)"
        )
