"""The soak's printed report: what ran, what every request answered, and the checks."""

from __future__ import annotations

import statistics
from collections.abc import Callable

from drills_app.soak.run import SoakResult

Write = Callable[[str], None]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report_write(result: SoakResult, write: Write) -> None:
    options, traffic = result.options, result.traffic
    write("")
    write("== soak report")
    write(f"database   {result.scratch.database}")
    write(f"broker     {result.scratch.broker}")
    write(
        f"servers    gunicorn with {options.web} workers, {options.workers} Celery worker(s) with "
        f"concurrency {options.concurrency}, beat; logs in {result.scratch.var_dir / 'log'}"
    )
    kills = f"every {options.kill_worker_every:g}s" if options.kill_worker_every else "never"
    write(
        f"load       {options.agents} agents at {options.rate:g} req/s for "
        f"{result.load_seconds:.0f}s; faults every {options.fault_every:g}s; "
        f"a worker SIGKILLed {kills}; drain {result.drain_seconds:.0f}s"
    )
    agent_requests = sum(c for (who, _r, _s), c in traffic.counts.items() if who == "agents")
    if result.load_seconds:
        achieved = agent_requests / result.load_seconds
        write(
            f"rate       agents achieved {achieved:.1f} req/s "
            f"(asked {options.agents * options.rate:g})"
        )
    _requests(result, write)
    _faults_and_kills(result, write)
    _backlog(result, write)
    _memory(result, write)
    write("")
    write("== checks")
    for finding in result.findings:
        mark = "PASS" if finding.passed else "FAIL"
        if not finding.judged:
            mark = "n/a "
        write(f"{mark}  {finding.check}: {finding.summary}")
        for line in finding.details:
            write(f"        {line}")
    write("")
    write(f"result: {'PASS' if result.passed else 'FAIL'}")


def _requests(result: SoakResult, write: Write) -> None:
    traffic = result.traffic
    write("")
    write(f"== requests ({traffic.total()} answered)")
    for who, classes in sorted(traffic.by_status_class().items()):
        counts = "  ".join(f"{name} {count}" for name, count in sorted(classes.items()))
        write(f"{who:<8} {counts}")
    if traffic.no_answer:
        write(f"no answer {dict(traffic.no_answer)}")
    write("")
    write(f"{'route':<44} {'count':>6} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7}  statuses")
    for route, statuses in sorted(traffic.by_route().items()):
        seconds = traffic.latencies.get(route, [0.0])
        spread = " ".join(f"{status}:{count}" for status, count in sorted(statuses.items()))
        write(
            f"{route:<44} {sum(statuses.values()):>6} "
            f"{statistics.median(seconds) * 1000:>7.0f} {_percentile(seconds, 0.95) * 1000:>7.0f} "
            f"{max(seconds) * 1000:>7.0f}  {spread}"
        )
    if traffic.server_errors:
        write("")
        write("every 5xx (seconds into the run, status, problem code, path):")
        for error in traffic.server_errors:
            write(
                f"  {error.at:7.1f}s {error.status} {error.code or '-'} {error.method} {error.path}"
            )


def _faults_and_kills(result: SoakResult, write: Write) -> None:
    write("")
    faults = ", ".join(f"{kind} x{count}" for kind, count in sorted(result.faults.items()))
    write(f"faults injected: {faults or 'none'}")
    for at, role, old, new in result.kills:
        write(f"  {at:6.0f}s SIGKILL {role} [{old}] → restarted [{new}]")


def _backlog(result: SoakResult, write: Write) -> None:
    if not result.backlog:
        return
    peak = max(count for _at, count in result.backlog)
    every = max(1, len(result.backlog) // 20)
    points = " ".join(f"{at:.0f}s:{count}" for at, count in result.backlog[::every])
    write(f"effects not yet final (peak {peak}): {points}")


def _memory(result: SoakResult, write: Write) -> None:
    write("")
    write("== memory per process (VmRSS MB at each sample; seconds into the run)")
    for verdict in sorted(result.memory, key=lambda v: (v.series.label, v.series.pid)):
        series = verdict.series
        points = " ".join(f"{at:.0f}s:{kib / 1024:.1f}" for at, kib in series.samples)
        if verdict.judged:
            growth = (verdict.last_kib - verdict.base_kib) / 1024
            judged = f"{'flat' if verdict.flat else 'GREW'} ({growth:+.1f} MB after warm-up)"
        else:
            judged = "too short a life to judge"
        write(f"{series.label:<16} [{series.pid}] {judged}")
        write(f"    {points}")
