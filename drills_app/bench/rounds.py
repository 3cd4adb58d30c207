"""The gate's throughput against the bare endpoint's, in alternating rounds.

One window of each says little on a shared machine: two runs 25 minutes apart, same code,
gave ratios of 0.215 and 0.253, and within one run the gate's three 10-second windows
answered 388.7, 275.4 and 410.0 requests/s while the bare endpoint's stayed between 1,444
and 1,538 (2026-12-04). Rounds of bare-then-gate put each pair under the same conditions;
the median pair's ratio is the figure that says how the gate compares, and the spread says
how far to trust it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from io import TextIOBase

from drills_app.bench.cpu import CpuSpent, cpu_sum
from drills_app.bench.load import LoadResult

Measure = Callable[[str], tuple[LoadResult, CpuSpent]]


@dataclass(frozen=True)
class Round:
    """One bare window and the gate window after it, with the CPU each cost."""

    bare: LoadResult
    gate: LoadResult
    bare_cpu: CpuSpent
    gate_cpu: CpuSpent

    @property
    def ratio(self) -> float:
        return self.gate.ratio_to(self.bare)


@dataclass(frozen=True)
class Rounds:
    rounds: list[Round]

    @property
    def median(self) -> Round:
        """The round whose ratio is the median (the lower of the two middle ones for an even
        count: a round that was measured, not an average of two)."""
        ordered = sorted(self.rounds, key=lambda measured: measured.ratio)
        return ordered[(len(ordered) - 1) // 2]

    @property
    def bare_cpu(self) -> CpuSpent:
        return cpu_sum([measured.bare_cpu for measured in self.rounds])

    @property
    def gate_cpu(self) -> CpuSpent:
        return cpu_sum([measured.gate_cpu for measured in self.rounds])

    @property
    def bare_requests(self) -> int:
        return sum(measured.bare.requests for measured in self.rounds)

    @property
    def gate_requests(self) -> int:
        return sum(measured.gate.requests for measured in self.rounds)


def rounds_run(measure: Measure, *, bare: str, gate: str, count: int) -> Rounds:
    """`count` rounds, each the bare endpoint's window then the gate's."""
    rounds = []
    for _ in range(count):
        bare_result, bare_cpu = measure(bare)
        gate_result, gate_cpu = measure(gate)
        rounds.append(Round(bare_result, gate_result, bare_cpu, gate_cpu))
    return Rounds(rounds)


def rounds_report(out: TextIOBase, measured: Rounds, seconds: int) -> None:
    """Each round's throughputs and ratio, then the median and the spread."""
    if len(measured.rounds) < 2:
        return
    out.write(f"rounds ({seconds} s bare, then {seconds} s reconcile, alternating):\n")
    for number, each in enumerate(measured.rounds, start=1):
        out.write(
            f"  round {number}: bare {each.bare.rps:.1f} rps, reconcile {each.gate.rps:.1f} rps, "
            f"ratio {each.ratio:.3f}\n"
        )
    ratios = sorted(each.ratio for each in measured.rounds)
    number = measured.rounds.index(measured.median) + 1
    out.write(
        f"ratio, median of {len(ratios)} rounds: {measured.median.ratio:.3f} "
        f"(round {number}, the table's rows; lowest {ratios[0]:.3f}, highest {ratios[-1]:.3f}); "
        f"CPU per request below: over every round\n"
    )
