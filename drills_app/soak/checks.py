"""What must hold after a soak: pure functions of what was collected, each a `Finding`.

- no 5xx from the product (an owner's injected outage relayed as 503 `owner_unavailable` is
  the protocol's answer, "nothing executed, retry", and is counted apart);
- no effect lost: every commit the gate recorded is in the product's ledger; what the product
  believes executed is in the owner's ledger, what it believes not executed is not; the owner
  executed nothing the product does not know;
- no effect duplicated: the owner's ledger holds each key once, and each account's record
  moved exactly once per write the owner applied (a write applied twice, or outside the
  ledger, shows there);
- every effect read back: final after the drain, and the readback's verdict is the owner's
  (verified ⇔ applied, postcondition_failed ⇔ acknowledged but not applied);
- memory per process flat after warm-up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from drills_app.soak.traffic import ServerErrorAnswer

FINAL = frozenset({"verified", "postcondition_failed", "not_executed", "rejected"})
# Statuses in which the product holds that the owner executed the command.
EXECUTED = frozenset({"accepted", "verified", "postcondition_failed"})
# A 503 that relays the owner's own outage (sandbox `unavailable` fault): nothing executed.
RELAYED_OWNER_CODES = frozenset({"owner_unavailable"})
LISTED = 20  # details printed per finding


@dataclass(frozen=True)
class ProductEffect:
    key: str
    subject: str
    status: str


@dataclass(frozen=True)
class OwnerApplication:
    """One row of the owner's idempotency ledger; `applied` false: acknowledged, dropped."""

    key: str
    subject: str
    applied: bool


@dataclass(frozen=True)
class Ledgers:
    gate_accepted: frozenset[str]
    sent: dict[str, str]  # key → subject, every key a commit went out with
    effects: list[ProductEffect]
    owner: list[OwnerApplication]
    versions: dict[str, int]  # account → its record's version after the drain
    initial_version: int = 1


@dataclass(frozen=True)
class Finding:
    check: str
    passed: bool
    summary: str
    details: list[str] = field(default_factory=list)
    judged: bool = True


def server_errors_check(errors: Iterable[ServerErrorAnswer]) -> Finding:
    errors = list(errors)
    product = [e for e in errors if e.code not in RELAYED_OWNER_CODES]
    relayed = len(errors) - len(product)
    details = [
        f"{e.at:7.1f}s {e.status} {e.code or '(no code)'} {e.method} {e.path} {e.detail}"
        for e in product[:LISTED]
    ]
    summary = f"{len(product)} from the product"
    if relayed:
        summary += f"; {relayed} x 503 owner_unavailable relayed from the injected owner outage"
    return Finding("no 5xx", not product, summary, details)


def _owner_by_key(ledgers: Ledgers) -> dict[str, list[OwnerApplication]]:
    found: dict[str, list[OwnerApplication]] = {}
    for row in ledgers.owner:
        found.setdefault(row.key, []).append(row)
    return found


def lost_check(ledgers: Ledgers) -> Finding:
    effects = {effect.key: effect for effect in ledgers.effects}
    owner = _owner_by_key(ledgers)
    problems = [
        f"{key}: the gate recorded it, the product's ledger has no such effect"
        for key in sorted(ledgers.gate_accepted - effects.keys())
    ]
    for effect in ledgers.effects:
        applied = any(row.applied for row in owner.get(effect.key, []))
        if effect.status in EXECUTED and effect.key not in owner:
            problems.append(f"{effect.key}: {effect.status}, but the owner never executed it")
        elif effect.status in ("not_executed", "rejected") and applied:
            problems.append(f"{effect.key}: {effect.status}, but the owner applied it")
    problems += [
        f"{key}: the owner executed it, the product has no such effect"
        for key in sorted(owner.keys() - effects.keys())
    ]
    summary = (
        f"{len(ledgers.gate_accepted)} accepted by the gate, {len(effects)} in the product's "
        f"ledger, {len(owner)} keys in the owner's ledger; {len(problems)} lost"
    )
    return Finding("no effect lost", not problems, summary, problems[:LISTED])


def duplicated_check(ledgers: Ledgers) -> Finding:
    problems = [
        f"{key}: executed {count} times by the owner"
        for key, count in sorted(Counter(row.key for row in ledgers.owner).items())
        if count > 1
    ]
    applied = Counter(row.subject for row in ledgers.owner if row.applied)
    for subject, version in sorted(ledgers.versions.items()):
        moves = version - ledgers.initial_version
        if moves != applied[subject]:
            problems.append(
                f"{subject}: the record moved {moves} times for {applied[subject]} applied keys"
            )
    summary = (
        f"{len(ledgers.owner)} owner executions over {len(ledgers.versions)} accounts; "
        f"{len(problems)} duplicated or applied outside the ledger"
    )
    return Finding("no effect duplicated", not problems, summary, problems[:LISTED])


def readback_check(ledgers: Ledgers) -> Finding:
    owner = _owner_by_key(ledgers)
    ours = [e for e in ledgers.effects if e.key in ledgers.sent]
    statuses = Counter(effect.status for effect in ours)
    problems = [
        f"{effect.key} ({effect.subject}): still {effect.status}"
        for effect in ours
        if effect.status not in FINAL
    ]
    for effect in ours:
        rows = owner.get(effect.key, [])
        applied = any(row.applied for row in rows)
        if effect.status == "verified" and not applied:
            problems.append(f"{effect.key}: verified, but the owner did not apply it")
        if effect.status == "postcondition_failed" and applied:
            problems.append(f"{effect.key}: postcondition_failed, but the owner applied it")
    summary = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
    return Finding(
        "every effect read back", not problems, summary or "no effects", problems[:LISTED]
    )


@dataclass
class MemorySeries:
    """One process's resident memory: (seconds into the run, KiB) per sample."""

    label: str
    pid: int
    samples: list[tuple[float, int]] = field(default_factory=list)


@dataclass(frozen=True)
class MemoryVerdict:
    series: MemorySeries
    judged: bool
    flat: bool
    base_kib: int = 0
    last_kib: int = 0


def memory_verdict(
    series: MemorySeries,
    *,
    warmup_seconds: float,
    min_span_seconds: float,
    growth_fraction: float,
    growth_floor_kib: int,
) -> MemoryVerdict:
    """Flat: from the first sample after warm-up to the last, growth within the larger of
    `growth_fraction` of the base and `growth_floor_kib`. Too short a life is not judged."""
    if not series.samples:
        return MemoryVerdict(series, judged=False, flat=True)
    born = series.samples[0][0]
    settled = [sample for sample in series.samples if sample[0] >= born + warmup_seconds]
    if len(settled) < 2 or settled[-1][0] - settled[0][0] < min_span_seconds:
        return MemoryVerdict(series, judged=False, flat=True)
    base, last = settled[0][1], settled[-1][1]
    allowed = max(growth_fraction * base, growth_floor_kib)
    return MemoryVerdict(
        series, judged=True, flat=last - base <= allowed, base_kib=base, last_kib=last
    )


def memory_check(verdicts: list[MemoryVerdict]) -> Finding:
    judged = [v for v in verdicts if v.judged]
    growing = [v for v in judged if not v.flat]
    details = [
        f"{v.series.label} [{v.series.pid}]: {v.base_kib / 1024:.1f} → {v.last_kib / 1024:.1f} MB"
        for v in growing
    ]
    summary = (
        f"{len(judged)} of {len(verdicts)} processes lived long enough to judge; "
        f"{len(growing)} grew"
    )
    return Finding("memory flat", not growing, summary, details, judged=bool(judged))


def servers_check(unexpected_exits: list[str]) -> Finding:
    return Finding(
        "servers stayed up",
        not unexpected_exits,
        "every server ran to the end"
        if not unexpected_exits
        else f"exited on their own: {', '.join(unexpected_exits)}",
    )
