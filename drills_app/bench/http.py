"""`bench http`: the gate over HTTP against a bare DRF endpoint, on the same server, in one run.

Starts gunicorn (the product's WSGI application, 2 sync workers by default) on a scratch
database of the configured engine, with the bare endpoint of `drills_app.bench.bare` mounted
beside the API, and drives both with the same load from `wrk`, in alternating rounds
(`rounds.py`); then 50 agents at one request per second each from `hey`; then `POST /effects`
with pre-issued snapshots, and the readbacks a Celery worker then drains. Prints rps,
p50/p99, the ratios and the queries per request.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import TextIOBase
from pathlib import Path
from unittest.mock import patch

from django.conf import settings
from django.db import connection
from django.db.models import Count, Max, Min, Q
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.views import APIView

from drills_app.bench import load
from drills_app.bench.common import free_port
from drills_app.bench.cpu import CpuSpent, cpu_spent
from drills_app.bench.estate import (
    ACTION,
    DECISION_CLASS,
    bench_account,
    bench_agent,
    bench_history,
    bench_past_decisions,
    bench_request,
    reconcile_body,
)
from drills_app.bench.rounds import rounds_report, rounds_run
from drills_app.bench.server_time import SERVER_TIME_HEADER, server_served, server_time_row
from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect
from reconcile_app.selectors.contracts import contract_current
from reconcile_app.services.reconcile import snapshot_issue

BIN = Path(sys.executable).parent
GUNICORN_CONFIG = Path(__file__).resolve().parents[2] / "config" / "gunicorn.py"
SUBJECT = "bench-account"
BARE = "bare DRF (validate body)"
RECONCILE = "POST /api/v1/reconcile"
EFFECTS = "POST /api/v1/effects"
# Below this many commits their own timestamps say little: the rate is over wrk's duration.
MIN_COMMITS_TIMED = 100


@dataclass(frozen=True)
class HttpOptions:
    web_workers: int = 2
    web_threads: int = 1  # above 1: gunicorn's gthread worker, with this many threads each
    seconds: int = 10
    rounds: int = 3  # bare then reconcile, alternating; the table shows the median round
    connections: int = 8
    agents: int = 50
    agent_seconds: int = 20
    commits: int = 2000
    history: int = 100  # evidence entries for the reconciled subject
    past_decisions: int = 2000  # decisions issued on it before the load


def _worker_kind(threads: int) -> str:
    return "sync workers" if threads <= 1 else f"gthread workers x {threads} threads"


def server_environment(workdir: Path) -> dict[str, str]:
    """The environment of the processes started: this process's settings, on the scratch
    database, with a private var dir (broker, cache) and a throttle the load cannot reach."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "drills_app.bench.http_settings"
    env["RECONCILE_VAR_DIR"] = str(workdir)
    env["RECONCILE_API_RATE"] = "100000000/min"
    env["RECONCILE_LOG_FORMAT"] = env.get("RECONCILE_LOG_FORMAT", "json")
    database = connection.settings_dict
    if connection.vendor == "sqlite":
        env["RECONCILE_SQLITE_PATH"] = str(database["NAME"])
    else:
        user, host, port = database["USER"], database["HOST"], database["PORT"] or 5432
        password = f":{database['PASSWORD']}" if database["PASSWORD"] else ""
        env["DATABASE_URL"] = f"postgres://{user}{password}@{host}:{port}/{database['NAME']}"
    return env


@contextmanager
def process(
    command: list[str], env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as output:
        child = subprocess.Popen(  # noqa: S603 - our own programs from this virtualenv
            command, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield child
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()


def _wait_until_up(base: str, child: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(f"the server exited; its log:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2):  # noqa: S310 - our server
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(
        f"the server did not answer within 60 s; its log:\n{log.read_text()[-3000:]}"
    )


def queries_per_request(path: str, body: str, key: str, headers: dict[str, str]) -> int:
    """SQL statements one request runs, counted in this process through the same views,
    after one request has warmed this process's copies (as every server process has).

    Throttling is off for these two requests: its counters live in the cache the servers
    share, which the load has just filled for this agent (and throttling runs no SQL)."""
    client = Client()
    with patch.object(APIView, "get_throttles", lambda view: []):
        client.post(
            path,
            body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}", **headers},
        )
        with CaptureQueriesContext(connection) as captured:
            response = client.post(
                path,
                body,
                content_type="application/json",
                headers={"Authorization": f"Bearer {key}", **headers},
            )
    if response.status_code >= 300:
        raise RuntimeError(f"{path} answered {response.status_code}: {response.content[:500]!r}")
    return len(captured.captured_queries)


def _row(out: TextIOBase, label: str, result: load.LoadResult, bare: load.LoadResult) -> None:
    out.write(
        f"{label:<28}{result.rps:>9.1f}{result.p50_ms:>10.1f}{result.p99_ms:>10.1f}"
        f"{result.ratio_to(bare):>9.3f}{result.failed:>8}\n"
    )


def _cpu_rows(
    out: TextIOBase, rows: list[tuple[str, CpuSpent, int]], *, header: bool = True
) -> None:
    """CPU per request of the web server's processes and the database's, for sizing."""
    if not all(spent.measured for _, spent, _ in rows):
        return
    if header:
        where = "in the web workers" if connection.vendor == "sqlite" else "its backends"
        out.write(f"{'CPU per request (ms)':<28}{'web':>9}{'database':>10}  (database: {where})\n")
    for label, spent, requests in rows:
        web_ms, database_ms = spent.per_request_ms(requests)
        database = "-" if database_ms is None else f"{database_ms:.2f}"
        out.write(f"{label:<28}{web_ms:>9.2f}{database:>10}\n")


def pre_issued_commits(
    principal: object, count: int, evidence: int, within_seconds: float
) -> list[str]:
    """One allow snapshot per fresh account, and the commit request that acts on it — as many
    as `count`, or as can be issued in `within_seconds` (a third of the contract's commit
    window: every snapshot must still be committable when wrk reaches it)."""
    lines: list[str] = []
    started = time.monotonic()
    for index in range(count):
        if time.monotonic() - started > within_seconds:
            break
        subject = f"{SUBJECT}-c{index:05d}"
        bench_account(subject, version=1, evidence=evidence)
        snapshot = snapshot_issue(
            principal=principal,  # type: ignore[arg-type]
            request=bench_request(subject),
        )
        body = {
            "snapshot_id": snapshot.snapshot_id,
            "action": ACTION,
            "resulting_value": "released",
        }
        version = snapshot.content["fields"]["collections_status"]["version"]
        lines.append(f'"{version}"\tbench-commit-{index}\t{json.dumps(body)}')
    return lines


def run(out: TextIOBase, options: HttpOptions) -> None:
    load.require("wrk")
    load.require("hey")
    principal, key = bench_agent()
    bench_account(SUBJECT)
    bench_history(SUBJECT, options.history)
    bench_past_decisions(principal, SUBJECT, options.past_decisions)
    body = json.dumps(reconcile_body(SUBJECT))
    auth = f"Bearer {key}"
    with tempfile.TemporaryDirectory(prefix="reconcile-bench-") as scratch:
        workdir = Path(scratch)
        env = server_environment(workdir)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        web_log = workdir / "web.log"
        gunicorn = [
            str(BIN / "gunicorn"),
            # As production runs it (per-worker metrics files included in the cost).
            f"--config={GUNICORN_CONFIG}",
            "config.wsgi:application",
            f"--workers={options.web_workers}",
            f"--threads={options.web_threads}",
            f"--bind=127.0.0.1:{port}",
            "--log-level=warning",
        ]
        with process(gunicorn, env, web_log) as web:
            _wait_until_up(base, web, web_log)
            out.write(
                f"bench http: {connection.vendor}, gunicorn {options.web_workers} "
                f"{_worker_kind(options.web_threads)}, "
                f"wrk {options.connections} connections x {options.seconds} s "
                f"(evidence entries for the subject: {options.history}; "
                f"decisions issued before the load: {options.past_decisions})\n"
            )
            bare_url, gate_url = f"{base}/bench/bare", f"{base}/api/v1/reconcile"
            for url in (bare_url, gate_url):  # warm both workers' imports and caches
                load.wrk(url, workdir=workdir, seconds=2, connections=2, auth=auth, body=body)

            def measure(url: str) -> tuple[load.LoadResult, CpuSpent]:
                with cpu_spent(web.pid) as spent:
                    result = load.wrk(
                        url,
                        workdir=workdir,
                        seconds=options.seconds,
                        connections=options.connections,
                        auth="" if url == bare_url else auth,
                        body=body,
                    )
                return result, spent

            histograms = workdir / "prometheus"  # config/gunicorn.py: under the var dir
            routes = {bare_url: "/bench/bare", gate_url: "/api/v1/reconcile"}
            with (
                server_served(histograms, routes[bare_url]) as bare_served,
                server_served(histograms, routes[gate_url]) as gate_served,
            ):
                measured = rounds_run(measure, bare=bare_url, gate=gate_url, count=options.rounds)
            out.write(
                f"{'endpoint':<28}{'rps':>9}{'p50 ms':>10}{'p99 ms':>10}{'ratio':>9}{'failed':>8}\n"
            )
            median = measured.median
            _row(out, BARE, median.bare, median.bare)
            _row(out, RECONCILE, median.gate, median.bare)
            rounds_report(out, measured, options.seconds)
            reconcile_queries = queries_per_request("/api/v1/reconcile", body, key, {})
            out.write(f"queries per reconcile: {reconcile_queries}\n")
            _cpu_rows(
                out,
                [
                    (BARE, measured.bare_cpu, measured.bare_requests),
                    (RECONCILE, measured.gate_cpu, measured.gate_requests),
                ],
            )
            out.write(SERVER_TIME_HEADER)
            out.write(server_time_row(BARE, bare_served.histogram))
            out.write(server_time_row(RECONCILE, gate_served.histogram))

            # The agents fire together each second: the last of a burst waits for the ones
            # before it, so the bare endpoint's figure under the same burst is the floor.
            for label, url in (("reconcile", gate_url), ("bare", bare_url)):
                with server_served(histograms, routes[url]) as crowd_served:
                    crowd = load.agents(
                        url,
                        workdir=workdir,
                        body=body,
                        auth=auth,
                        agents=options.agents,
                        seconds=options.agent_seconds,
                    )
                out.write(
                    f"{options.agents} agents x 1 request/s for {options.agent_seconds} s, "
                    f"{label}: {crowd.requests} requests, p50 {crowd.p50_ms:.1f} ms, "
                    f"p99 {crowd.p99_ms:.1f} ms, failed {crowd.failed}\n"
                )
                out.write(server_time_row("  server side", crowd_served.histogram))

            started = time.perf_counter()
            window = contract_current(decision_class=DECISION_CLASS).commit_window_seconds
            requests = pre_issued_commits(principal, options.commits, 2, window / 3)
            out.write(
                f"\npre-issued {len(requests)} snapshots in {time.perf_counter() - started:.1f} s\n"
            )
            requests_file = workdir / "commits.tsv"
            requests_file.write_text("\n".join(requests) + "\n")
            with (
                cpu_spent(web.pid) as commits_cpu,
                server_served(histograms, "/api/v1/effects") as commits_served,
            ):
                commits = load.wrk(
                    f"{base}/api/v1/effects",
                    workdir=workdir,
                    seconds=options.seconds * 3,
                    connections=options.connections,
                    auth=auth,
                    requests_file=requests_file,
                )
            accepted, concluded, took = _commits_took(commits.seconds)
            committed = load.LoadResult(
                requests=concluded,
                seconds=took,
                p50_ms=commits.p50_ms,
                p99_ms=commits.p99_ms,
                failed=commits.failed,
            )
            _row(out, EFFECTS, committed, median.bare)
            out.write(
                f"  {accepted} effects from {commits.requests} requests, {concluded} with an "
                f"outcome in {committed.seconds:.1f} s (the first recorded to the last outcome) "
                f"(a thread's last request may repeat its key: an idempotent replay)\n"
            )
            _cpu_rows(out, [(EFFECTS, commits_cpu, commits.requests)], header=False)
            out.write(SERVER_TIME_HEADER)
            out.write(server_time_row(EFFECTS, commits_served.histogram))

            worker_log = workdir / "worker.log"
            worker = [str(BIN / "celery"), "-A", "config", "worker", "-l", "warning", "-c", "2"]
            started = time.perf_counter()
            with process(worker, env, worker_log):
                pending = _drain(accepted)
            drained = time.perf_counter() - started
            out.write(
                f"readbacks: {accepted - pending} of {accepted} concluded by one worker "
                f"(2 processes) in {drained:.1f} s: {(accepted - pending) / drained:.1f}/s "
                f"(including the worker's start)\n"
            )
    if settings.DEBUG:
        out.write("warning: DEBUG is on; figures include query logging\n")


def _commits_took(load_seconds: float) -> tuple[int, int, float]:
    """The effects recorded, those that reached an outcome, and the seconds from the first
    recorded to the last outcome. wrk runs for its whole duration, but its threads stop once
    they have sent their share of the pre-issued commits: over wrk's duration, the rate could
    never exceed commits ÷ duration. (The span starts after the first request's authorisation
    and ends before the last one's answer: with a handful of commits, wrk's duration is
    used.)"""
    span = Effect.objects.aggregate(
        recorded=Count("id"),
        concluded=Count("id", filter=Q(outcome_at__isnull=False)),
        first=Min("created_at"),
        last=Max("outcome_at"),
    )
    if span["concluded"] < MIN_COMMITS_TIMED:
        return span["recorded"], span["concluded"], load_seconds
    return span["recorded"], span["concluded"], (span["last"] - span["first"]).total_seconds()


def _drain(accepted: int, timeout: float = 300.0) -> int:
    """Wait until every accepted effect has a concluded readback; returns those still open."""
    deadline = time.monotonic() + timeout
    open_statuses = [EffectStatus.ACCEPTED, EffectStatus.RECORDED, EffectStatus.SENT]
    pending = accepted
    while time.monotonic() < deadline:
        pending = Effect.objects.filter(status__in=open_statuses).count()
        if pending == 0:
            return 0
        time.sleep(0.5)
    return pending
