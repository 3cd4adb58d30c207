"""Reads of quarantines: every source and memory class with its state, the memory records
under quarantine, and the history (the API's list and detail and the console's quarantine
page alike).

A target is trusted unless an active (applying or applied) quarantine names it. The memory
classes are those declared (a class no memory was written in yet can be quarantined ahead of
one, as the API allows), the classes memories were written with, the classes claims were
presented with, and any class a quarantine has named.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet
from django.utils.text import Truncator

from reconcile_app.choices import EffectStatus, QuarantineScope, QuarantineStatus
from reconcile_app.errors import NotFound
from reconcile_app.models import (
    ClaimVerdict,
    DecisionSnapshot,
    Effect,
    MemoryClass,
    MemoryRecord,
    Quarantine,
    Source,
)
from reconcile_app.selectors.memory_class_names import memory_class_names
from reconcile_app.services.quarantine import in_force

TRUSTED = "trusted"
NOTE_VALUE_CHARS = 60
SAFE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class QuarantineTarget:
    """One source, memory class or memory record, and the quarantine in force on it (if any)."""

    scope: str
    target: str
    # Who owns a source and how it is read; what a memory record says; empty for a class.
    note: str
    quarantine: Quarantine | None
    # A source's effects whose outcome is unknown: what "Re-check unknown" would take.
    unknown: int = 0

    @property
    def state(self) -> str:
        return self.quarantine.status if self.quarantine is not None else TRUSTED

    @property
    def active(self) -> bool:
        return self.quarantine is not None

    @property
    def applying(self) -> bool:
        return self.state == QuarantineStatus.APPLYING

    @property
    def dom_id(self) -> str:
        """A stable element id, so a row can be swapped in place after an action."""
        scope = self.scope.replace("_", "-")
        if SAFE_ID.match(self.target):
            return f"target-{scope}-{self.target}"
        # Claim memory classes are free text; a digest keeps the id valid and stable.
        digest = hashlib.sha256(self.target.encode()).hexdigest()[:12]
        return f"target-{scope}-x{digest}"


def _active_by_target() -> dict[tuple[str, str], Quarantine]:
    rows = Quarantine.objects.filter(in_force()).select_related("created_by")
    return {(row.scope, row.target): row for row in rows}


def unknown_by_source(*, source: str | None = None) -> dict[str, int]:
    """How many effects against each source (or just `source`) have an unknown outcome:
    one grouped query, however many sources are listed."""
    rows = Effect.objects.filter(status=EffectStatus.UNKNOWN)
    if source is not None:
        rows = rows.filter(source__name=source)
    counted = rows.order_by().values_list("source__name").annotate(count=Count("pk"))
    return {name: count for name, count in counted}


def _source_note(owner: str, mode: str) -> str:
    return f"owned by {owner} · {mode.replace('_', ' ')}"


def quarantine_targets() -> list[QuarantineTarget]:
    """Every source, then every memory class, each with its active quarantine, then the
    memory records under quarantine: 4 queries (the sources' unknown outcomes counted in
    one), a fifth when a record is held."""
    active = _active_by_target()
    unknown = unknown_by_source()
    sources = {
        name: _source_note(owner, mode)
        for name, owner, mode in Source.objects.order_by("name").values_list(
            "name", "owner", "mode"
        )
    }
    # A quarantine on a source that has since been unloaded still holds, so it is listed.
    for scope, target in active:
        if scope == QuarantineScope.SOURCE:
            sources.setdefault(target, "no longer loaded")
    targets = [
        QuarantineTarget(
            scope=QuarantineScope.SOURCE,
            target=name,
            note=note,
            quarantine=active.get((QuarantineScope.SOURCE, name)),
            unknown=unknown.get(name, 0),
        )
        for name, note in sorted(sources.items())
    ]
    targets += [
        QuarantineTarget(
            scope=QuarantineScope.MEMORY_CLASS,
            target=name,
            note="",
            quarantine=active.get((QuarantineScope.MEMORY_CLASS, name)),
        )
        for name in memory_class_names()
    ]
    # Memory records are too many to list: those under quarantine are, to be lifted.
    held = sorted(target for scope, target in active if scope == QuarantineScope.MEMORY)
    notes = _memory_notes(held) if held else {}
    targets += [
        QuarantineTarget(
            scope=QuarantineScope.MEMORY,
            target=memory_id,
            note=notes.get(memory_id, "no longer recorded"),
            quarantine=active[(QuarantineScope.MEMORY, memory_id)],
        )
        for memory_id in held
    ]
    return targets


def _memory_notes(memory_ids: list[str]) -> dict[str, str]:
    """What each record says, for the row that names it (one query)."""
    return {
        memory_id: f"{memory_class} · {subject}.{field or fact_key} = "
        f"{Truncator(repr(value)).chars(NOTE_VALUE_CHARS)} · by {agent}"
        for memory_id, memory_class, subject, field, fact_key, value, agent in (
            MemoryRecord.objects.filter(memory_id__in=memory_ids).values_list(
                "memory_id", "memory_class", "subject", "field", "fact_key", "value", "agent__name"
            )
        )
    }


def _memory_class_known(name: str) -> bool:
    return (
        MemoryClass.objects.filter(name=name).exists()
        or MemoryRecord.objects.filter(memory_class=name).exists()
        or ClaimVerdict.objects.filter(memory_class=name).exists()
        or Quarantine.objects.filter(scope=QuarantineScope.MEMORY_CLASS, target=name).exists()
    )


def quarantine_target(*, scope: str, target: str) -> QuarantineTarget:
    """One row of the page, for polling and for the dialogs: two queries for a known target."""
    if "\x00" in scope or "\x00" in target:
        # The dialog is redrawn from the posted scope and target, whatever the form thought of
        # them; PostgreSQL refuses a NUL in any text it is asked to compare (a server error),
        # and no name that holds one is stored.
        raise NotFound(f"no {scope!r} target {target!r}", code="unknown_target")
    active = (
        Quarantine.objects.filter(in_force(), scope=scope, target=target)
        .select_related("created_by")
        .first()
    )
    if scope == QuarantineScope.SOURCE:
        source = Source.objects.filter(name=target).values_list("owner", "mode").first()
        if source is None and active is None:
            raise NotFound(f"no source {target!r}", code="unknown_source")
        note = _source_note(*source) if source else "no longer loaded"
    elif scope == QuarantineScope.MEMORY_CLASS:
        if active is None and not _memory_class_known(target):
            raise NotFound(f"no memory class {target!r}", code="unknown_memory_class")
        note = ""
    elif scope == QuarantineScope.MEMORY:
        notes = _memory_notes([target])
        if active is None and target not in notes:
            raise NotFound(f"no memory {target!r}", code="unknown_memory")
        note = notes.get(target, "no longer recorded")
    else:
        raise NotFound(f"no quarantine scope {scope!r}", code="invalid_scope")
    unknown = (
        unknown_by_source(source=target).get(target, 0) if scope == QuarantineScope.SOURCE else 0
    )
    return QuarantineTarget(
        scope=scope, target=target, note=note, quarantine=active, unknown=unknown
    )


def console_quarantine_history() -> QuerySet[Quarantine]:
    """Every quarantine, past and present, newest first, with who created and lifted it."""
    return Quarantine.objects.select_related("created_by", "lifted_by").order_by(
        "-created_at", "-id"
    )


def console_quarantine(*, quarantine_id: str) -> Quarantine:
    quarantine = console_quarantine_history().filter(quarantine_id=quarantine_id).first()
    if quarantine is None:
        raise NotFound(f"no quarantine {quarantine_id}", code="quarantine_not_found")
    return quarantine


def snapshot_quarantines(*, snapshot: DecisionSnapshot) -> list[Quarantine]:
    """The quarantines a snapshot was decided under and felt: a source whose read came back
    quarantined, a memory class or memory record whose claims were quarantined. One query.

    The snapshot's content names what was quarantined (the read statuses, the classes in
    force, the memory records' quarantine ids); the rows are those in force at `issued_at`.
    """
    content = snapshot.content or {}
    sources = {
        item.get("source")
        for item in (content.get("fields") or {}).values()
        if item.get("status") == "quarantined"
    }
    quarantined_claims = [
        claim for claim in content.get("claims") or [] if claim.get("verdict") == "quarantined"
    ]
    classes = {claim.get("memory_class") for claim in quarantined_claims} & set(
        content.get("quarantined_memory_classes") or []
    )
    memory_quarantines = set((content.get("quarantined_memories") or {}).values())
    if not (sources or classes or memory_quarantines):
        return []
    issued_at = snapshot.issued_at
    return list(
        Quarantine.objects.filter(
            Q(scope=QuarantineScope.SOURCE, target__in=sources)
            | Q(scope=QuarantineScope.MEMORY_CLASS, target__in=classes)
            | Q(quarantine_id__in=memory_quarantines),
            created_at__lte=issued_at,
        )
        .exclude(lifted_at__lt=issued_at)
        .order_by("created_at", "pk")
    )
