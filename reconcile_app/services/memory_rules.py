"""Each kind of memory's rules (seed 000: "four kinds of memory, four retirement rules").

- episodic: admitted directly with its provenance; expires at its TTL (`valid_until`, or the
  class's `default_ttl_days`).
- preference: admitted only with the subject's consent among what it derives from; expires at
  its TTL, and a newer preference for the same subject and field supersedes it.
- procedural, policy: admitted as a suggestion that a reviewer other than the writer promotes
  (or rejects); retired only by review.
- fact: `fact_key`, owner and source revision, selected by rule (seed 001); retired by its
  `valid_until`, by supersession or by review.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from reconcile_app.choices import EvidenceKind, MemoryAdmission, MemoryKind
from reconcile_app.errors import Unprocessable
from reconcile_app.models import EvidenceEntry, MemoryClass
from reconcile_app.services.references import split_reference

# Kinds whose records expire by date; procedural and policy memory retires only by review.
EXPIRING_KINDS = (MemoryKind.EPISODIC, MemoryKind.PREFERENCE, MemoryKind.FACT)


def memory_class_get(name: str) -> MemoryClass:
    """The declared class, or 422 `memory_class_unknown` (writes name a declared class)."""
    found = MemoryClass.objects.filter(name=name).first()
    if found is None:
        raise Unprocessable(
            f"memory class {name!r} is not declared (load its file with load_contracts)",
            code="memory_class_unknown",
            memory_class=name,
        )
    return found


def target_check(memory_class: MemoryClass, *, field: str, fact_key: str) -> None:
    """Facts are what `fact` classes hold, and only they have a fact key."""
    if memory_class.kind == MemoryKind.FACT and not fact_key:
        raise Unprocessable(
            f"{memory_class.name} holds facts: a memory of it needs a fact_key",
            code="memory_kind_mismatch",
        )
    if fact_key and memory_class.kind != MemoryKind.FACT:
        raise Unprocessable(
            f"{memory_class.name} is {memory_class.kind} memory: fact keys belong to fact classes",
            code="memory_kind_mismatch",
        )


def consent_check(memory_class: MemoryClass, *, subject: str, derived_from: Sequence[str]) -> None:
    """A preference derives from the subject's consent (an evidence entry of kind consent)."""
    if memory_class.kind != MemoryKind.PREFERENCE:
        return
    evidence_ids = [ref for kind, ref in map(split_reference, derived_from) if kind == "evidence"]
    if not EvidenceEntry.objects.filter(
        evidence_id__in=evidence_ids, kind=EvidenceKind.CONSENT, subject=subject
    ).exists():
        raise Unprocessable(
            f"a preference about {subject} needs its consent among derived_from (an evidence "
            "entry of kind consent for that subject)",
            code="consent_missing",
        )


def reviewed(memory_class: MemoryClass) -> bool:
    return memory_class.admission == MemoryAdmission.REVIEW


def default_expiry(memory_class: MemoryClass, *, today: date) -> date | None:
    """When a memory written without valid_until stops being in force (None: it does not)."""
    if memory_class.kind not in (MemoryKind.EPISODIC, MemoryKind.PREFERENCE):
        return None
    if memory_class.default_ttl_days is None:
        return None
    return today + timedelta(days=memory_class.default_ttl_days)
