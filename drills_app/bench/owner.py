"""`bench owner`: what one owner call through the `http` adapter costs the calling process.

A deployment's owners are real systems behind HTTP, usually TLS: every reconcile reads
them, every commit posts to them, every readback and resolution looks them up. The other
benchmarks read the in-process sandbox, so none of them shows this cost. Here a minimal
owner (drills_app.bench.owner_server) runs in its own process, over plain HTTP and over TLS
with a certificate from a throwaway CA, and this process calls it through the adapter:
reads, then commits, one after another. Each call is timed and this process's CPU is read
around them (the owner's is its own), with the adapter's connections kept and with
keep-alive off so that every call connects (RECONCILE_HTTP_KEEPALIVE_MS=0), in one run.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import TextIOBase
from pathlib import Path

import httpx
import trustme
from django.conf import settings
from django.utils import timezone

from drills_app.bench.common import free_port
from lineage_app.bench.measuring import percentiles
from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.sources import ApplyOutcome, EffectCommand, ReadAsked
from reconcile_app.sources.http import HttpAdapter
from reconcile_app.sources.owner_client import owner_client_reset

WARM_UP_CALLS = 20
KEPT_DEFAULT_SECONDS = 1.0  # when the configured keep-alive is off, the kept rows use this
DISTANT_MS = 10  # an owner in another zone: its answer takes this long to come
DISTANT_OWNERS = 3  # a contract whose fields three owners hold


@dataclass(frozen=True)
class Owner:
    scheme: str
    url: str
    trust: ssl.SSLContext

    def accepted(self) -> int:
        """Connections the owner has accepted, asked on a connection of its own: each question
        adds one, so two answers differ by one more than the connections opened between."""
        answer = httpx.get(f"{self.url}connections", verify=self.trust, timeout=5)
        return int(answer.json()["accepted"])


@dataclass(frozen=True)
class Measured:
    owner: str  # http | https
    connections: str  # kept | new per call
    call: str  # read | commit
    wall_ms: list[float]
    cpu_ms_per_call: float
    opened: int


@contextmanager
def _owner_process(
    port: int, trust: ssl.SSLContext, pem: Path | None, latency_ms: int = 0
) -> Iterator[Owner]:
    argv = [sys.executable, "-m", "drills_app.bench.owner_server", str(port)]
    argv += [str(pem)] if pem else []
    argv += [f"--latency-ms={latency_ms}"] if latency_ms else []
    process = subprocess.Popen(argv, cwd=settings.BASE_DIR)  # noqa: S603 - our own module
    scheme = "https" if pem else "http"
    owner = Owner(scheme, f"{scheme}://127.0.0.1:{port}/", trust)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                owner.accepted()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the benchmark's owner did not listen on {port}") from None
                time.sleep(0.05)
        yield owner
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True)
class Owners:
    plain: Owner
    tls: Owner
    distant: Owner  # over TLS, each read answered DISTANT_MS late


@contextmanager
def owners() -> Iterator[Owners]:
    """The owner over plain HTTP, over TLS, and over TLS at a distance, trusted through
    SSL_CERT_FILE as a deployment with a private CA would trust its owners."""
    authority = trustme.CA()
    with tempfile.TemporaryDirectory() as folder:
        pem, bundle = Path(folder) / "owner.pem", Path(folder) / "ca.pem"
        authority.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(pem))
        authority.cert_pem.write_to_path(str(bundle))
        trust = ssl.create_default_context(cafile=str(bundle))
        before = os.environ.get("SSL_CERT_FILE")
        os.environ["SSL_CERT_FILE"] = str(bundle)
        owner_client_reset(trust_store=True)
        try:
            with (
                _owner_process(free_port(), trust, None) as plain,
                _owner_process(free_port(), trust, pem) as tls,
                _owner_process(free_port(), trust, pem, DISTANT_MS) as distant,
            ):
                yield Owners(plain, tls, distant)
        finally:
            if before is None:
                os.environ.pop("SSL_CERT_FILE", None)
            else:
                os.environ["SSL_CERT_FILE"] = before
            owner_client_reset(trust_store=True)


def _adapter(name: str, base_url: str) -> HttpAdapter:
    """The adapter of a source that is never saved: the benchmark needs no database."""
    return HttpAdapter(
        Source(name=name, adapter="http", base_url=base_url, options={"timeout_ms": 5000})
    )


def _calls(adapter: HttpAdapter) -> dict[str, Callable[[int], None]]:
    def read(i: int) -> None:
        result = adapter.read(f"acct-{i}", "status")
        if result.status != ReadStatus.OK:
            raise RuntimeError(f"a read failed: {result.detail}")

    def commit(i: int) -> None:
        command = EffectCommand(
            idempotency_key=f"bench-{time.monotonic_ns()}-{i}",
            subject=f"acct-{i}",
            field="status",
            action="set",
            resulting_value="released",
            expected_version=7,
        )
        result = adapter.apply(command)
        if result.outcome != ApplyOutcome.ACCEPTED:
            raise RuntimeError(f"a commit failed: {result.code} {result.detail}")

    return {"read": read, "commit": commit}


def measure(owner: Owner, keepalive_seconds: float, calls: int) -> list[Measured]:
    settings.RECONCILE_HTTP_KEEPALIVE_SECONDS = keepalive_seconds
    owner_client_reset()
    actions = _calls(_adapter("bench-owner", owner.url))
    for i in range(WARM_UP_CALLS):
        actions["read"](i)
    measured = []
    for name, action in actions.items():
        opened_before = owner.accepted()
        wall_ms = []
        cpu_before = time.process_time()
        for i in range(calls):
            started = time.perf_counter()
            action(i)
            wall_ms.append((time.perf_counter() - started) * 1000)
        cpu_ms = (time.process_time() - cpu_before) * 1000 / calls
        kind = "kept" if keepalive_seconds > 0 else "new per call"
        opened = owner.accepted() - opened_before - 1
        measured.append(Measured(owner.scheme, kind, name, wall_ms, cpu_ms, opened))
    return measured


def reads_of_several_owners(distant: Owner, rounds: int) -> dict[str, tuple[list[float], float]]:
    """A reconcile's owner calls for a contract whose fields DISTANT_OWNERS sources hold (on
    the distant owner): two live fields' reads and one event-sourced source's events, one
    after another and at once (HttpAdapter.answer_together, as the gate asks them): wall ms
    of each round, and this process's CPU ms per round."""
    adapters = [_adapter(f"owner-{n}", f"{distant.url}{n}/") for n in range(DISTANT_OWNERS)]
    *live, ledger = adapters
    reads: list[ReadAsked] = [(each, "acct-1", "status") for each in live]

    def one_after_another() -> list[str]:
        fetched = ledger.events("acct-1", recorded_before=timezone.now())
        return [*(each.read("acct-1", "status").status for each in live), fetched.status]

    def at_once() -> list[str]:
        read, fetched = HttpAdapter.answer_together(reads, [(ledger, "acct-1", timezone.now())])
        return [*(result.status for result in read), *(each.status for each in fetched)]

    ways: dict[str, Callable[[], list[str]]] = {
        "one after another": one_after_another,
        "at once": at_once,
    }
    measured = {}
    for way, action in ways.items():
        action()  # connected, and the pool's threads started
        wall_ms = []
        cpu_before = time.process_time()
        for _ in range(rounds):
            started = time.perf_counter()
            if any(status != ReadStatus.OK for status in action()):
                raise RuntimeError("a call to the distant owner failed")
            wall_ms.append((time.perf_counter() - started) * 1000)
        measured[way] = (wall_ms, (time.process_time() - cpu_before) * 1000 / rounds)
    return measured


def run(out: TextIOBase, calls: int) -> None:
    configured = settings.RECONCILE_HTTP_KEEPALIVE_SECONDS
    kept = configured if configured > 0 else KEPT_DEFAULT_SECONDS
    rows: list[Measured] = []
    rounds = max(1, calls // 10)
    try:
        with owners() as each:
            for owner in (each.plain, each.tls):
                rows += measure(owner, kept, calls)
                rows += measure(owner, 0, calls)
            settings.RECONCILE_HTTP_KEEPALIVE_SECONDS = kept
            owner_client_reset()
            several = reads_of_several_owners(each.distant, rounds)
    finally:
        settings.RECONCILE_HTTP_KEEPALIVE_SECONDS = configured
        owner_client_reset()
    out.write(
        f"owner calls through the http adapter: {calls} reads, then {calls} commits, one at "
        f"a time; the owner in its own process; kept connections idle out after {kept:g} s\n"
    )
    out.write(
        f"{'owner':<6} {'connections':<13} {'call':<7} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'CPU ms/call':>12} {'connections opened':>19}\n"
    )
    for row in rows:
        p50, p95 = percentiles(row.wall_ms)
        out.write(
            f"{row.owner:<6} {row.connections:<13} {row.call:<7} {p50:>8.3f} {p95:>8.3f} "
            f"{row.cpu_ms_per_call:>12.3f} {row.opened:>19}\n"
        )
    out.write("kept against new per call (this process's CPU per call; wall p50):\n")
    by_kind = {(row.owner, row.call, row.connections): row for row in rows}
    for (scheme, call, connections), kept_row in by_kind.items():
        if connections != "kept":
            continue
        new_row = by_kind[(scheme, call, "new per call")]
        cpu = kept_row.cpu_ms_per_call / new_row.cpu_ms_per_call
        wall = percentiles(kept_row.wall_ms)[0] / percentiles(new_row.wall_ms)[0]
        out.write(f"  {scheme:<6} {call:<7} CPU {cpu:.2f}x  wall {wall:.2f}x\n")
    out.write(
        f"a reconcile's calls to {DISTANT_OWNERS} sources on one owner over TLS that answers "
        f"each {DISTANT_MS} ms late (two live fields' reads and one event-sourced source's "
        f"events), {rounds} times (connections kept):\n"
    )
    for way, (wall_ms, cpu_ms) in several.items():
        p50, p95 = percentiles(wall_ms)
        out.write(f"  {way:<18} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  CPU {cpu_ms:6.3f} ms\n")
