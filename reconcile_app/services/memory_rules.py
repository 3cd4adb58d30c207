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
from datetime import date, datetime, timedelta

from django.db.models import Exists, OuterRef
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import EvidenceKind, MemoryAdmission, MemoryKind, MemoryStatus
from reconcile_app.errors import Conflict, Unprocessable
from reconcile_app.instants import FUTURE_TOLERANCE
from reconcile_app.models import EvidenceEntry, MemoryClass, MemoryRecord
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
    # Consent an operator revoked (or superseded) is consent withdrawn: it admits nothing.
    if (
        not EvidenceEntry.objects.filter(
            evidence_id__in=evidence_ids, kind=EvidenceKind.CONSENT, subject=subject
        )
        .exclude(Exists(EvidenceEntry.objects.filter(revokes=OuterRef("pk"))))
        .exclude(Exists(EvidenceEntry.objects.filter(supersedes=OuterRef("pk"))))
        .exists()
    ):
        raise Unprocessable(
            f"a preference about {subject} needs its consent among derived_from (an evidence "
            "entry of kind consent for that subject, not revoked or superseded)",
            code="consent_missing",
        )


def expiry_check(memory_class: MemoryClass, *, valid_until: date | None, today: date) -> None:
    """An episodic or preference memory whose `valid_until` has passed is expired before it
    is written: admitted, it would be recalled as current until the next expiry run. (A fact
    record may be dated in the past: the history `facts/{key}/current?on=` reads.)"""
    if memory_class.kind not in EXPIRING_KINDS or memory_class.kind == MemoryKind.FACT:
        return
    if valid_until is not None and valid_until < today:
        raise Unprocessable(
            f"valid_until {valid_until.isoformat()} has passed (today is {today.isoformat()} "
            "in the fact timezone): the memory would be expired when written",
            code="valid_until_past",
        )


def written_at_check(written_at: datetime | None) -> None:
    """A memory stated as written ahead of the server's clock (beyond skew) is refused, as an
    observation is (evidence.observed_at_check): recalled, it would read as newer than every
    observation to come, so a state that replaced it could never show as superseding it."""
    if written_at is not None and written_at > timezone.now() + FUTURE_TOLERANCE:
        raise Unprocessable(
            f"written_at {rfc3339(written_at)} is ahead of the server's clock",
            code="written_in_future",
            tolerance_seconds=int(FUTURE_TOLERANCE.total_seconds()),
        )


def admission_check(
    memory_class: MemoryClass, *, derived_from: Sequence[str], supersedes: MemoryRecord | None
) -> None:
    """A memory admitted without review may neither carry forward a belief no reviewer
    admitted (a suggested or rejected memory among `derived_from`), nor retire a reviewed
    memory (procedural and policy memory is retired only by review)."""
    if reviewed(memory_class):
        return  # a reviewer sees it, and what it derives from and supersedes, first
    memory_ids = [ref for kind, ref in map(split_reference, derived_from) if kind == "memory"]
    unadmitted = list(
        MemoryRecord.objects.filter(
            memory_id__in=memory_ids,
            status__in=[MemoryStatus.SUGGESTED, MemoryStatus.REJECTED],
        ).values_list("memory_id", "status")
    )
    if unadmitted:
        named = ", ".join(f"{memory_id} ({status})" for memory_id, status in sorted(unadmitted))
        raise Conflict(
            f"{named}: no reviewer admitted it, so a memory in force may not derive from it "
            "(derive from what supports it, or write the memory in a reviewed class)",
            code="derivation_not_admitted",
            memory_ids=sorted(memory_id for memory_id, _ in unadmitted),
        )
    if supersedes is not None:
        retired_class = MemoryClass.objects.filter(name=supersedes.memory_class).first()
        if retired_class is not None and reviewed(retired_class):
            raise Conflict(
                f"{supersedes.memory_id} is a reviewed {supersedes.memory_class} memory: it is "
                "retired only by review. Write its replacement in a reviewed class, where a "
                "reviewer promotes it.",
                code="supersession_needs_review",
            )


def reviewed(memory_class: MemoryClass) -> bool:
    return memory_class.admission == MemoryAdmission.REVIEW


def default_expiry(memory_class: MemoryClass, *, today: date) -> date | None:
    """When a memory written without valid_until stops being in force (None: it does not)."""
    if memory_class.kind not in (MemoryKind.EPISODIC, MemoryKind.PREFERENCE):
        return None
    if memory_class.default_ttl_days is None:
        return None
    try:
        return today + timedelta(days=memory_class.default_ttl_days)
    except OverflowError:
        # A TTL stored before load_contracts bounded it: in force to the calendar's end.
        return date.max
