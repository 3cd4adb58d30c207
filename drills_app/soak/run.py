"""One soak, in order: scratch estate, servers, load with faults and kills, drain, checks."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import httpx
from django.conf import settings
from django.db import connection

from drills_app.bench.common import free_port
from drills_app.procfs import rss_kib
from drills_app.soak import checks
from drills_app.soak.agents import FIELD, SOURCE, Agent, Owner
from drills_app.soak.estate import (
    Scratch,
    estate_load,
    people_create,
    scratch_drop,
    scratch_prepare,
)
from drills_app.soak.processes import Servers
from drills_app.soak.traffic import Traffic
from reconcile_app.models import Effect
from sandbox_app.models import SandboxEffect, SandboxRecord

# The owner's misbehaviour, in turn: (kind, firings, seconds).
FAULT_CYCLE: tuple[tuple[str, int, int], ...] = (
    ("timeout_after_commit", 3, 0),  # committed, answer lost: unknown outcomes to resolve
    ("latency", 5, 1),  # a slow owner
    ("unavailable", 5, 0),  # an outage: reads refuse, commits 503, resolutions wait
    ("lag", 5, 3600),  # a replica an hour behind: stale reads refuse
    ("drop_postcondition", 1, 0),  # acknowledged, never applied: the readback must see it
)
WATCH_EVERY_SECONDS = 10.0


@dataclass(frozen=True)
class SoakOptions:
    agents: int = 50
    rate: float = 1.0
    minutes: float = 5.0
    web: int = 2
    workers: int = 1
    concurrency: int = 1
    kill_worker_every: float = 0.0
    fault_every: float = 10.0
    drain_seconds: float = 240.0
    sample_every: float = 60.0
    warmup_seconds: float = 60.0
    memory_growth: float = 0.10
    memory_floor_mb: float = 5.0
    var_dir: Path | None = None
    port: int = 0
    keep_database: bool = False


@dataclass
class SoakResult:
    options: SoakOptions
    scratch: Scratch
    servers: Servers
    traffic: Traffic
    findings: list[checks.Finding] = field(default_factory=list)
    memory: list[checks.MemoryVerdict] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    kills: list[tuple[float, str, int | None, int | None]] = field(default_factory=list)
    backlog: list[tuple[float, int]] = field(default_factory=list)
    load_seconds: float = 0.0
    drain_seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(finding.passed for finding in self.findings)


def soak_run(options: SoakOptions, say: Callable[[str], None]) -> SoakResult:
    tag = secrets.token_hex(3)
    scratch = scratch_prepare(var_dir=options.var_dir, tag=tag)
    servers = Servers(
        base_dir=Path(settings.BASE_DIR),
        var_dir=scratch.var_dir,
        env=scratch.env,
        port=options.port or free_port(),
        web=options.web,
        workers=options.workers,
        concurrency=options.concurrency,
    )
    result = SoakResult(options, scratch, servers, Traffic())
    try:
        say(f"scratch estate: {scratch.database}, var dir {scratch.var_dir}")
        estate_load()
        people = people_create(agents=options.agents, tag=tag)
        say(f"starting {options.web} web, {options.workers} worker(s), beat on {servers.url}")
        servers.start()
        servers.wait_ready()
        say(f"{options.agents} agents for {options.minutes:g} min at {options.rate:g} req/s each")
        asyncio.run(_drive(result, people.operator_token, people.agent_keys, tag, say))
        result.findings = _judge(result, tag)
    finally:
        servers.stop()
        if not options.keep_database:
            scratch_drop(scratch)
    return result


async def _drive(
    result: SoakResult,
    token: str,
    agent_keys: list[tuple[str, str]],
    tag: str,
    say: Callable[[str], None],
) -> None:
    options, servers, traffic = result.options, result.servers, result.traffic
    rng = Random(tag)  # noqa: S311 (load pacing, not a secret)
    owner = Owner(servers.url, token, traffic)
    agents = [
        Agent(name, key, servers.url, tag, traffic, owner, Random(rng.random()))  # noqa: S311
        for name, key in agent_keys
    ]
    await asyncio.gather(*(agent.open_accounts() for agent in agents))
    memory: dict[int, checks.MemorySeries] = {}
    unexpected: list[str] = []
    started = traffic.started = time.monotonic()
    stop, drained = asyncio.Event(), asyncio.Event()
    background = [
        asyncio.create_task(
            _every(options.sample_every, drained, _sample, servers, memory, started)
        ),
        asyncio.create_task(
            _every(WATCH_EVERY_SECONDS, drained, _watch, result, tag, unexpected, started)
        ),
    ]
    if options.fault_every > 0:
        background.append(asyncio.create_task(_faults(options.fault_every, stop, owner, result)))
    if options.kill_worker_every > 0:
        background.append(asyncio.create_task(_kills(options.kill_worker_every, stop, result)))
    running = [asyncio.create_task(agent.run(stop, 1.0 / options.rate)) for agent in agents]
    await asyncio.sleep(options.minutes * 60)
    stop.set()
    await asyncio.gather(*running)
    result.load_seconds = time.monotonic() - started
    say(f"load done after {result.load_seconds:.0f}s; draining (up to {options.drain_seconds:g}s)")
    drain_started = time.monotonic()
    await owner.faults_clear()
    while time.monotonic() - drain_started < options.drain_seconds:
        if await asyncio.to_thread(_pending, tag) == 0:
            break
        await asyncio.sleep(5)
    result.drain_seconds = time.monotonic() - drain_started
    drained.set()
    await asyncio.gather(*background)
    await asyncio.to_thread(_sample, servers, memory, started)
    await owner.aclose()
    result.memory = [
        checks.memory_verdict(
            series,
            warmup_seconds=options.warmup_seconds,
            min_span_seconds=2 * options.sample_every,
            growth_fraction=options.memory_growth,
            growth_floor_kib=int(options.memory_floor_mb * 1024),
        )
        for series in memory.values()
    ]
    result.findings.append(checks.servers_check(unexpected))


async def _every(seconds: float, done: asyncio.Event, work: Callable[..., Any], *args: Any) -> None:
    """Run `work(*args)` in a thread now and every `seconds` until `done`."""
    while not done.is_set():
        await asyncio.to_thread(work, *args)
        try:
            await asyncio.wait_for(done.wait(), timeout=seconds)
        except TimeoutError:
            continue


def _sample(servers: Servers, memory: dict[int, checks.MemorySeries], started: float) -> None:
    at = time.monotonic() - started
    for label, pid in servers.processes():
        kib = rss_kib(pid)
        if kib is not None:
            memory.setdefault(pid, checks.MemorySeries(label, pid)).samples.append((at, kib))


def _watch(result: SoakResult, tag: str, unexpected: list[str], started: float) -> None:
    result.backlog.append((time.monotonic() - started, _pending(tag)))
    for role in result.servers.dead():
        if role not in unexpected:
            unexpected.append(role)


def _pending(tag: str) -> int:
    """The soak's effects not yet final (read back, resolved or rejected)."""
    try:
        return (
            Effect.objects.filter(idempotency_key__startswith=f"soak-{tag}-")
            .exclude(status__in=checks.FINAL)
            .count()
        )
    finally:
        connection.close()


async def _faults(every: float, stop: asyncio.Event, owner: Owner, result: SoakResult) -> None:
    turn = 0
    while not await _stopped(stop, every):
        kind, count, seconds = FAULT_CYCLE[turn % len(FAULT_CYCLE)]
        turn += 1
        try:
            await owner.fault(kind, count, seconds)
        except httpx.HTTPError:
            continue  # the answer (or its absence) is in the traffic; the soak goes on
        result.faults[kind] += 1


async def _kills(every: float, stop: asyncio.Event, result: SoakResult) -> None:
    turn = 0
    while not await _stopped(stop, every):
        number = turn % result.servers.workers + 1
        turn += 1
        old, new = await asyncio.to_thread(result.servers.kill_worker, number)
        at = time.monotonic() - result.traffic.started
        result.kills.append((at, f"worker-{number}", old, new))


async def _stopped(stop: asyncio.Event, seconds: float) -> bool:
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        return False
    return True


def _judge(result: SoakResult, tag: str) -> list[checks.Finding]:
    ledgers = ledgers_collect(tag, result.traffic)
    return [
        checks.server_errors_check(result.traffic.server_errors),
        checks.lost_check(ledgers),
        checks.duplicated_check(ledgers),
        checks.readback_check(ledgers),
        checks.memory_check(result.memory),
        *result.findings,
    ]


def ledgers_collect(tag: str, traffic: Traffic) -> checks.Ledgers:
    """The product's effects, the owner's ledger and the accounts' records, for this soak."""
    prefix = f"soak-{tag}-"
    try:
        effects = [
            checks.ProductEffect(key, subject, status)
            for key, subject, status in Effect.objects.filter(
                idempotency_key__startswith=prefix
            ).values_list("idempotency_key", "subject", "status")
        ]
        owner = [
            checks.OwnerApplication(key, str((receipt or {}).get("subject", "")), applied)
            for key, receipt, applied in SandboxEffect.objects.filter(
                source=SOURCE, idempotency_key__startswith=prefix
            ).values_list("idempotency_key", "receipt", "applied")
        ]
        versions = dict(
            SandboxRecord.objects.filter(
                source=SOURCE, field=FIELD, subject__startswith=prefix
            ).values_list("subject", "version")
        )
    finally:
        connection.close()
    return checks.Ledgers(
        gate_accepted=frozenset(k for k, record in traffic.commits.items() if record.gate_accepted),
        sent={key: record.subject for key, record in traffic.commits.items()},
        effects=effects,
        owner=owner,
        versions=versions,
    )
