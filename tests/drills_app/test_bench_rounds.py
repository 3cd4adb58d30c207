"""`bench http`'s alternating rounds (drills_app/bench/rounds.py): which round the table shows,
what each window is measured against, and the CPU summed over the rounds."""

from __future__ import annotations

import io

import pytest

from drills_app.bench.cpu import CpuSpent, cpu_sum
from drills_app.bench.load import LoadResult
from drills_app.bench.rounds import Round, Rounds, rounds_report, rounds_run


def _load(rps: float, seconds: float = 10.0) -> LoadResult:
    return LoadResult(
        requests=int(rps * seconds), seconds=seconds, p50_ms=1.0, p99_ms=2.0, failed=0
    )


def test_rounds_alternate_bare_then_gate_and_the_median_round_is_a_measured_one():
    # Three windows of each, the machine slowing between them, as it does here.
    throughputs = {"bare": [1500.0, 1000.0, 1200.0], "gate": [300.0, 250.0, 330.0]}
    asked: list[str] = []

    def measure(url: str) -> tuple[LoadResult, CpuSpent]:
        asked.append(url)
        rps = throughputs[url].pop(0)
        return _load(rps), CpuSpent(web=rps / 1000, database=rps / 2000, measured=True)

    measured = rounds_run(measure, bare="bare", gate="gate", count=3)

    assert asked == ["bare", "gate", "bare", "gate", "bare", "gate"]
    assert [round(each.ratio, 3) for each in measured.rounds] == [0.2, 0.25, 0.275]
    assert measured.median is measured.rounds[1]  # 0.25: neither the first nor an average
    assert measured.bare_requests == 37_000 and measured.gate_requests == 8_800
    assert measured.bare_cpu.web == pytest.approx(3.7)
    assert measured.gate_cpu.database == pytest.approx(0.44)
    assert measured.gate_cpu.measured

    report = io.StringIO()
    rounds_report(report, measured, seconds=10)
    text = report.getvalue()
    assert "round 2: bare 1000.0 rps, reconcile 250.0 rps, ratio 0.250" in text
    assert "ratio, median of 3 rounds: 0.250 (round 2" in text
    assert "lowest 0.200, highest 0.275" in text


def test_with_an_even_count_the_lower_middle_round_is_shown():
    rounds = Rounds(
        [
            Round(_load(1000.0), _load(300.0), CpuSpent(), CpuSpent()),
            Round(_load(1000.0), _load(200.0), CpuSpent(), CpuSpent()),
        ]
    )
    assert rounds.median is rounds.rounds[1]


def test_one_round_prints_no_rounds_report():
    rounds = Rounds([Round(_load(1000.0), _load(300.0), CpuSpent(), CpuSpent())])
    report = io.StringIO()
    rounds_report(report, rounds, seconds=10)
    assert report.getvalue() == ""


def test_the_database_cpu_is_summed_only_when_every_window_measured_it():
    measured = CpuSpent(web=1.0, database=0.5, measured=True)
    remote = CpuSpent(web=1.0, database=None, measured=True)
    assert cpu_sum([measured, measured]).database == pytest.approx(1.0)
    assert cpu_sum([measured, remote]).database is None
    assert cpu_sum([measured, remote]).web == pytest.approx(2.0)
    assert not cpu_sum([measured, CpuSpent()]).measured
    assert not cpu_sum([]).measured
