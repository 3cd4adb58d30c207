"""Replay a snapshot: as it was knowable then, or under today's corrections.

`as_recorded` rebuilds the content from what was recorded by the snapshot's cut-offs — the
reads stored in the snapshot, the evidence recorded by the recorded-time cut-off (and, from
content schema 5, no further along the chain than the decision read), the same
contract, policy and reducer versions — and must reproduce the hash exactly. `corrected`
reruns the same decision over today's ledger (revocations, replacements) for facts that held
by the valid-time cut-off (or that it knew then), and reports what changed. Neither reads
an owner's current state afresh: an event-sourced source's events are asked of its owner
again, as recorded by each read's own time, and folded as the reconcile folded them
(`refold_event_sourced`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import islice
from typing import Any

from django.db.models import Max
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from reconcile_app.canonical import content_hash, same_value
from reconcile_app.choices import ReadStatus
from reconcile_app.errors import ValidationFailed
from reconcile_app.models import DecisionSnapshot, EvidenceEntry, Source
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.engine import (
    SCHEMAS_FOLDING_LATER_VALID_EVENTS,
    SCHEMAS_WITHOUT_READ_MODE,
)
from reconcile_app.reconciliation.types import (
    NOT_PROPOSED,
    Binding,
    Claim,
    ContractSpec,
    FieldRead,
)
from reconcile_app.selectors.contracts import contract_spec
from reconcile_app.selectors.ledger import evidence_as_of
from reconcile_app.services.owner_reads import fold_bound, folded_reads, vouched_ahead_judged

MODES = ("as_recorded", "corrected")


@dataclass
class ReplayResult:
    mode: str
    snapshot_id: str
    exact: bool
    original_hash: str
    replayed_hash: str
    differences: list[dict[str, Any]] = field(default_factory=list)
    content: dict[str, Any] = field(default_factory=dict)
    # Sources whose events the reconcile folded but which could not give them again now
    # (down, timed out, their adapter or reducer gone): the replay could not be completed,
    # which is not the decision changing. Asking again later may make it exact.
    unavailable_sources: list[str] = field(default_factory=list)
    # A snapshot from before `ledger_seq` was recorded (content schema < 5) replayed exactly
    # only when read no further along the chain than the last entry it cites: that position.
    inferred_ledger_seq: int | None = None


def _time(raw: str | None) -> datetime | None:
    return parse_datetime(raw) if raw else None


def recorded_reads(content: dict[str, Any]) -> list[FieldRead]:
    """The reads as stored: what the owners answered then (never a fresh read)."""
    return [
        FieldRead(
            field=name,
            source=read["source"],
            consistency=read["consistency"],
            status=read["status"],
            value=read["value"],
            version=read["version"],
            observed_at=_time(read["observed_at"]),
            valid_from=_time(read["valid_from"]),
            recorded_at=_time(read["recorded_at"]),
            read_at=_time(read["read_at"]),  # type: ignore[arg-type]
            detail=read["detail"],
            inputs=read.get("inputs"),
            # Snapshots before schema 3 do not say (replay then goes by the source's mode).
            mode=read.get("mode", "live"),
        )
        for name, read in content["fields"].items()
    ]


def recorded_cutoffs(content: dict[str, Any]) -> tuple[datetime, datetime]:
    """The decision's valid-time and recorded-time cut-offs, as stored."""
    valid_time = _time(content["cutoffs"]["valid_time"])
    recorded_time = _time(content["cutoffs"]["recorded_time"])
    assert valid_time is not None and recorded_time is not None  # written by rfc3339()
    return valid_time, recorded_time


def recorded_binding(content: dict[str, Any]) -> Binding:
    """What was asked, as stored (a value proposed or not)."""
    binding = content["binding"]
    return Binding(
        principal=binding["principal"],
        subject=binding["subject"],
        purpose=binding["purpose"],
        decision_class=binding["decision_class"],
        proposed_action=binding["proposed_action"],
        proposed_value=binding.get("proposed_value", NOT_PROPOSED),
    )


def recorded_claims(content: dict[str, Any]) -> list[Claim]:
    return [
        Claim(
            subject=item["subject"],
            field=item["field"],
            value=item["value"],
            written_at=_time(item["written_at"]),
            memory_class=item["memory_class"],
            purpose=item["purpose"],
            derived_from=tuple(item["derived_from"]),
            note=item["note"],
            memory_id=item.get("memory_id", ""),
        )
        for item in content["claims"]
    ]


# A source's events never reached the reconcile: it was quarantined (not asked), it answered
# nothing (unavailable, timed out) or there was no reducer to fold them with (unavailable).
NOTHING_FOLDED = frozenset({ReadStatus.QUARANTINED, ReadStatus.UNAVAILABLE, ReadStatus.TIMEOUT})


def refold_event_sourced(
    *,
    spec: ContractSpec,
    subject: str,
    reads: list[FieldRead],
    corrected: bool,
    valid_time: datetime,
    modes_recorded: bool,
    valid_by_read: bool = True,
) -> list[FieldRead]:
    """Event-sourced fields are rebuilt from the owner's event log, not taken on trust.

    As recorded: the events recorded by each read's own read time (and, `valid_by_read`,
    content schema 4, valid by then: `owner_reads.fold_bound`). Corrected: every event
    recorded until now that describes a moment up to the valid-time cut-off (late arrivals).
    The sources refolded are those whose events the reconcile folded: by each read's recorded
    `mode` (`modes_recorded`, content schema 3), else by the source's mode now. A source
    whose events never reached the reconcile (quarantined, unavailable, timed out) keeps its
    reads as recorded in both modes: no events of it fed the decision, so there are none to
    correct, and a decision refused in an owner's outage stays refused under `corrected`.
    """
    by_field = {read.field: read for read in reads}
    names = {spec_field.name: spec_field.source for spec_field in spec.fields}
    if modes_recorded:
        folded_then = {read.source for read in reads if read.mode == "event_sourced"}
        found = Source.objects.filter(name__in=folded_then)
    else:
        found = Source.objects.filter(name__in=set(names.values()), mode="event_sourced")
    for source in found:
        fields = [name for name, owner in names.items() if owner == source.name]
        stored = by_field[fields[0]]
        if stored.status in NOTHING_FOLDED:
            continue
        refolded = folded_reads(
            spec=spec,
            source=source,
            subject=subject,
            fields=fields,
            recorded_before=timezone.now() if corrected else stored.read_at,
            valid_by=valid_time
            if corrected
            else (fold_bound(stored.read_at, stored.observed_at) if valid_by_read else None),
        )
        for read in refolded:
            original = by_field[read.field]
            # When the owner vouched for the events, and the consistency it offered then, are
            # part of what was recorded (the source's row may say otherwise today).
            refold = replace(
                read,
                observed_at=original.observed_at,
                read_at=original.read_at,
                consistency=original.consistency,
            )
            # Judged stale as read for an owner vouching for a time ahead of our clock: so
            # again (a snapshot stored before that judgement keeps its read as it was).
            if original.status == ReadStatus.STALE:
                refold = vouched_ahead_judged(refold)
            by_field[read.field] = refold
    return [by_field[read.field] for read in reads]


def snapshot_replay(*, snapshot: DecisionSnapshot, mode: str, refold: bool = True) -> ReplayResult:
    """Rebuild the snapshot's content (see the module docstring) and compare hashes.

    `refold=False` takes event-sourced reads as recorded instead of folding the owner's
    event log again: for the release gates, which never read an owner system. What they
    then prove is that the engine rebuilds the same content from what was recorded.
    """
    if mode not in MODES:
        raise ValidationFailed("mode must be as_recorded or corrected", code="invalid_mode")
    original = snapshot.content
    spec = contract_spec(snapshot.contract)
    binding_content = original["binding"]
    binding = recorded_binding(original)
    valid_time, recorded_time = recorded_cutoffs(original)
    # Content schema 5 on: the evidence chain's position the decision read up to.
    ledger_seq = original.get("ledger_seq")
    schema_version = original.get("schema_version", "1")
    claims = recorded_claims(original)
    fields = {spec_field.name for spec_field in spec.fields} | {
        claim.field for claim in claims if claim.subject == binding.subject
    }
    if mode == "as_recorded":
        evidence = evidence_as_of(
            subject=binding.subject,
            fields=fields,
            recorded_by=recorded_time,
            ledger_seq=ledger_seq,
        )
    else:
        evidence = evidence_as_of(
            subject=binding.subject,
            fields=fields,
            recorded_by=timezone.now(),
            observed_by=valid_time,
            # Entries the decision saw count even if dated past its valid-time cut-off:
            # dropping them would report a change that no correction made.
            known_by=recorded_time,
            known_seq=ledger_seq,
        )
    recorded = reads = recorded_reads(original)
    if refold:
        reads = refold_event_sourced(
            spec=spec,
            subject=binding.subject,
            reads=reads,
            corrected=mode == "corrected",
            valid_time=valid_time,
            modes_recorded=schema_version not in SCHEMAS_WITHOUT_READ_MODE,
            valid_by_read=schema_version not in SCHEMAS_FOLDING_LATER_VALID_EVENTS,
        )

    def rebuilt(evidence: list[Any]) -> dict[str, Any]:
        return engine.evaluate(
            contract=spec,
            binding=binding,
            raw_reads=reads,
            evidence=evidence,
            claims=claims,
            quarantined_classes=frozenset(original.get("quarantined_memory_classes", [])),
            quarantined_memories=original.get("quarantined_memories", {}),
            capable_actions=frozenset(binding_content.get("capabilities", [])),
            valid_time=valid_time,
            recorded_time=recorded_time,
            schema_version=schema_version,
            ledger_seq=ledger_seq,
        ).content

    content = rebuilt(evidence)
    replayed_hash = content_hash(content)
    inferred_seq = None
    if mode == "as_recorded" and ledger_seq is None and replayed_hash != snapshot.content_hash:
        # Before content schema 5 the decision's chain position was not kept, and an entry
        # stamped before its cut-off may have committed after it read the ledger (appends
        # stamp under the head's lock, commit a moment later). Every entry up to the last
        # one it cites had committed when it read (appends commit in `seq` order): read to
        # there, the replay uses nothing the decision could not see. Kept only if exact.
        bound = manifest_seq(original)
        bounded = rebuilt(
            evidence_as_of(
                subject=binding.subject, fields=fields, recorded_by=recorded_time, ledger_seq=bound
            )
        )
        if content_hash(bounded) == snapshot.content_hash:
            content, replayed_hash, inferred_seq = bounded, snapshot.content_hash, bound
    # The rebuild starts from the stored inputs, so an outcome edited in the database behind
    # the application's back rebuilds the hash as issued: exact also needs the stored content
    # to hash as issued, or a tampered record would replay "exact" beside its differences.
    stored_intact = content_hash(original) == snapshot.content_hash
    return ReplayResult(
        mode=mode,
        snapshot_id=snapshot.snapshot_id,
        exact=stored_intact and replayed_hash == snapshot.content_hash,
        original_hash=snapshot.content_hash,
        replayed_hash=replayed_hash,
        differences=content_differences(original, content),
        content=content,
        unavailable_sources=sorted(
            {
                now.source
                for then, now in zip(recorded, reads, strict=True)
                if then.status not in NOTHING_FOLDED and now.status in NOTHING_FOLDED
            }
        ),
        inferred_ledger_seq=inferred_seq,
    )


def manifest_seq(content: dict[str, Any]) -> int:
    """The chain position of the last evidence entry the content cites (0: none)."""
    cited = [item["evidence_id"] for item in content.get("evidence_manifest", [])]
    found = EvidenceEntry.objects.filter(evidence_id__in=cited).aggregate(last=Max("seq"))
    return found["last"] or 0


def content_differences(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """What a reviewer needs to see changed: decision, completeness, fields, verdicts."""
    found: list[dict[str, Any]] = []

    def note(path: str, old: Any, new: Any) -> None:
        if not same_value(old, new):
            found.append({"path": path, "recorded": old, "replayed": new})

    note("decision.result", before["decision"]["result"], after["decision"]["result"])
    note(
        "decision.permitted_actions",
        before["decision"]["permitted_actions"],
        after["decision"]["permitted_actions"],
    )
    note(
        "decision.reasons",
        [reason["code"] for reason in before["decision"]["reasons"]],
        [reason["code"] for reason in after["decision"]["reasons"]],
    )
    note("completeness", before["completeness"], after["completeness"])
    for name, read in before["fields"].items():
        replayed = after["fields"].get(name, {})
        for key in ("status", "value", "evidence"):
            note(f"fields.{name}.{key}", read.get(key), replayed.get(key))
    for old, new in zip(before["claims"], after["claims"], strict=False):
        note(f"claims[{old['index']}].verdict", old["verdict"], new["verdict"])
    note(
        "contradictions",
        [(item["kind"], item["field"]) for item in before["contradictions"]],
        [(item["kind"], item["field"]) for item in after["contradictions"]],
    )
    note(
        "evidence_manifest",
        [item["evidence_id"] for item in before["evidence_manifest"]],
        [item["evidence_id"] for item in after["evidence_manifest"]],
    )
    if found:
        return found
    # A replay that is not exact must never say "nothing changed": name what did.
    return [
        {"path": path, "recorded": old, "replayed": new}
        for path, old, new in islice(changed_paths(before, after), MAX_CHANGED_PATHS)
    ]


MAX_CHANGED_PATHS = 20
MISSING = "(missing)"


def changed_paths(before: Any, after: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Every place two snapshot contents differ, in key order: its path (`fields.x.detail`,
    `claims[0]`) and both values (`MISSING` for a key one of them lacks)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            where = f"{path}.{key}" if path else str(key)
            if key not in before or key not in after:
                yield where, before.get(key, MISSING), after.get(key, MISSING)
            else:
                yield from changed_paths(before[key], after[key], where)
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from changed_paths(old, new, f"{path}[{index}]")
    elif not same_value(before, after):
        yield path, before, after
