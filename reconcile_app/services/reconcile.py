"""`reconcile`: bind → read → support → classify → decide → issue (DESIGN.md).

Reads from owners happen before any transaction is opened (network I/O never holds a lock);
the snapshot, its reads, verdicts, contradictions and decision receipt are then written in one
transaction, so a snapshot is either wholly there or not at all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from reconcile_app.canonical import content_hash
from reconcile_app.choices import (
    ContradictionKind,
    ContradictionStatus,
    DecisionResult,
    EvidenceKind,
    ReadStatus,
)
from reconcile_app.errors import Conflict, Forbidden, ValidationFailed
from reconcile_app.models import (
    ClaimVerdict,
    Contradiction,
    DecisionReceipt,
    DecisionSnapshot,
    EvidenceEntry,
    Principal,
    Source,
    StateRead,
)
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import (
    NOT_PROPOSED,
    Binding,
    Claim,
    ContractSpec,
    EvidenceView,
    FieldRead,
)
from reconcile_app.selectors.contracts import contract_current, contract_spec
from reconcile_app.services.escalations import escalation_open_for_snapshot
from reconcile_app.services.event_reads import folded_reads
from reconcile_app.services.provenance import snapshot_lineage
from reconcile_app.services.quarantine import epoch_check, quarantines_active
from reconcile_app.sources import ReadResult, SourceAdapter, adapter_for

logger = logging.getLogger(__name__)
MAX_CLAIMS = 1000
STATE_ASSERTING_KINDS = (
    EvidenceKind.OBSERVATION,
    EvidenceKind.DOCUMENT,
    EvidenceKind.CORRECTION,
    EvidenceKind.EFFECT_RECEIPT,
    EvidenceKind.READBACK,
)


@dataclass(frozen=True)
class ReconcileRequest:
    subject: str
    purpose: str
    decision_class: str
    proposed_action: str = ""
    contract_version: str | None = None
    claims: Sequence[Claim] = ()
    proposed_value: Any = NOT_PROPOSED


def _capable_actions(principal: Principal, decision_class: str) -> frozenset[str]:
    return frozenset(
        principal.capabilities.filter(decision_class=decision_class).values_list(
            "action", flat=True
        )
    )


def bind(*, principal: Principal, request: ReconcileRequest) -> tuple[ContractSpec, frozenset[str]]:
    """Refuse what the principal may not ask: no ambient authority."""
    capable = _capable_actions(principal, request.decision_class)
    if not capable or (
        request.proposed_action and request.proposed_action not in capable and "*" not in capable
    ):
        wanted = f"{request.decision_class}:{request.proposed_action or '*'}"
        raise Forbidden(
            f"{principal.name} has no capability {wanted}",
            code="capability_missing",
            capability=wanted,
        )
    spec = contract_spec(
        contract_current(decision_class=request.decision_class, version=request.contract_version)
    )
    if request.purpose != spec.purpose:
        raise Forbidden(
            f"{request.decision_class} serves purpose {spec.purpose!r}, not {request.purpose!r}",
            code="purpose_mismatch",
        )
    if request.proposed_action and request.proposed_action not in spec.actions:
        raise ValidationFailed(
            f"{request.proposed_action!r} is not an action of {spec.decision_class}@{spec.version}",
            code="unknown_action",
            actions=sorted(spec.actions),
        )
    if request.proposed_value is not NOT_PROPOSED and not request.proposed_action:
        raise ValidationFailed(
            "proposed_value binds the value of a proposed_action: name the action too",
            code="proposed_action_missing",
        )
    if len(request.claims) > MAX_CLAIMS:
        raise ValidationFailed(f"at most {MAX_CLAIMS} claims per request", code="too_many_claims")
    return spec, capable


def read_fields(
    *,
    spec: ContractSpec,
    subject: str,
    sources: dict[str, Source],
    quarantined: frozenset[str] = frozenset(),
) -> list[FieldRead]:
    """Read every contract field from its owner. Adapters turn failures into statuses.

    A quarantined source is not asked at all: its fields are `quarantined`.
    """
    reads: list[FieldRead] = []
    adapters: dict[str, SourceAdapter] = {}
    folded: dict[str, FieldRead] = {}
    for source_name in {
        f.source
        for f in spec.fields
        if sources[f.source].mode == "event_sourced" and f.source not in quarantined
    }:
        source = sources[source_name]
        adapter = adapters.setdefault(source.name, adapter_for(source))
        names = [f.name for f in spec.fields if f.source == source_name]
        for read in folded_reads(
            spec=spec, source=source, adapter=adapter, subject=subject, fields=names
        ):
            folded[read.field] = read
    for field_spec in spec.fields:
        if field_spec.name in folded:
            reads.append(folded[field_spec.name])
            continue
        source = sources[field_spec.source]
        if source.name in quarantined:
            reads.append(
                FieldRead(
                    field=field_spec.name,
                    source=source.name,
                    consistency=source.consistency,
                    status=ReadStatus.QUARANTINED,
                    value=None,
                    version=None,
                    observed_at=None,
                    valid_from=None,
                    recorded_at=None,
                    read_at=timezone.now(),
                    detail=f"{source.name} is quarantined",
                )
            )
            continue
        result = _read_one(adapters, source, subject, field_spec.name)
        reads.append(
            FieldRead(
                field=field_spec.name,
                source=source.name,
                consistency=source.consistency,
                status=str(result.status),
                value=result.value,
                version=result.version,
                observed_at=result.observed_at,
                valid_from=result.valid_from,
                recorded_at=result.recorded_at,
                read_at=timezone.now(),
                detail=result.detail,
            )
        )
    return reads


def asserted_value(kind: str, value: Any, revokes: bool = False) -> tuple[bool, Any]:
    """What value of the field an entry vouches for, if any.

    Observations, documents and corrections state a value. A receipt vouches for the value
    its effect produced, a readback for the value it found. Model proposals and tool requests
    say nothing about the world: they never support or contradict state.
    """
    if kind == EvidenceKind.CORRECTION:
        # A revocation withdraws an entry; only a replacement states a value.
        return not revokes, value
    if kind in (EvidenceKind.OBSERVATION, EvidenceKind.DOCUMENT):
        return True, value
    if kind == EvidenceKind.EFFECT_RECEIPT and isinstance(value, dict):
        return "resulting_value" in value, value.get("resulting_value")
    if kind == EvidenceKind.READBACK and isinstance(value, dict):
        return "value" in value, value.get("value")
    return False, None


def _read_one(
    adapters: dict[str, SourceAdapter], source: Source, subject: str, field: str
) -> ReadResult:
    """One read; an adapter that raises fails closed as `unavailable` instead of crashing."""
    try:
        adapter = adapters.get(source.name) or adapters.setdefault(source.name, adapter_for(source))
        return adapter.read(subject, field)
    except Exception as exc:
        logger.exception("adapter of %s raised on %s/%s", source.name, subject, field)
        return ReadResult.failed(ReadStatus.UNAVAILABLE, f"adapter error: {type(exc).__name__}")


def evidence_as_of(
    *,
    subject: str,
    fields: set[str],
    recorded_by: datetime,
    observed_by: datetime | None = None,
) -> list[EvidenceView]:
    """Evidence for the subject's fields recorded by the cut-off, with withdrawals applied.

    One query whatever the number of claims or entries: withdrawal (a revoking or superseding
    entry recorded by the cut-off) is an EXISTS on the same table.
    """
    withdrawals = EvidenceEntry.objects.filter(
        Q(revokes_id=OuterRef("pk")) | Q(supersedes_id=OuterRef("pk")),
        recorded_at__lte=recorded_by,
    )
    entries = EvidenceEntry.objects.filter(
        subject=subject,
        field__in=fields,
        recorded_at__lte=recorded_by,
        kind__in=STATE_ASSERTING_KINDS,
    )
    if observed_by is not None:
        # Two clocks: what held by the valid-time cut-off, as recorded by `recorded_by`.
        entries = entries.filter(observed_at__lte=observed_by)
    rows = (
        entries.annotate(withdrawn=Exists(withdrawals))
        .order_by("seq")
        .values_list(
            "evidence_id",
            "hash",
            "subject",
            "field",
            "kind",
            "value",
            "source",
            "observed_at",
            "recorded_at",
            "withdrawn",
            "revokes_id",
        )
    )
    views = []
    for (
        evidence_id,
        digest,
        subj,
        field,
        kind,
        value,
        source,
        observed,
        recorded,
        gone,
        revokes_id,
    ) in rows:
        asserts, asserted = asserted_value(kind, value, revokes=revokes_id is not None)
        if asserts:
            views.append(
                EvidenceView(
                    evidence_id, digest, subj, field, asserted, source, observed, recorded, gone
                )
            )
    return views


class QuarantineChanged(Exception):
    """The set of quarantines moved while this reconcile ran: run it again."""


ATTEMPTS_ON_QUARANTINE_CHANGE = 3


def snapshot_issue(*, principal: Principal, request: ReconcileRequest) -> DecisionSnapshot:
    """Run the protocol for one request and persist the immutable snapshot.

    A reconcile that races a quarantine either sees it or was issued before it: if the
    quarantine view changes between the reads and the insert, the protocol runs again.
    """
    for _ in range(ATTEMPTS_ON_QUARANTINE_CHANGE):
        try:
            return _snapshot_issue_once(principal=principal, request=request)
        except QuarantineChanged:
            continue
    # Quarantines changing under every attempt: say so rather than issue a half-seen view.
    raise Conflict(
        "quarantines kept changing while this decision was made; ask again",
        code="quarantine_changed",
    )


def _snapshot_issue_once(*, principal: Principal, request: ReconcileRequest) -> DecisionSnapshot:
    spec, capable = bind(principal=principal, request=request)
    quarantines = quarantines_active()
    sources = {
        source.name: source
        for source in Source.objects.filter(name__in={f.source for f in spec.fields})
    }
    raw_reads = read_fields(
        spec=spec, subject=request.subject, sources=sources, quarantined=quarantines.sources
    )
    decided_at = timezone.now()
    relevant_fields = {f.name for f in spec.fields} | {
        claim.field for claim in request.claims if claim.subject == request.subject
    }
    evidence = evidence_as_of(
        subject=request.subject, fields=relevant_fields, recorded_by=decided_at
    )
    binding = Binding(
        principal=principal.name,
        subject=request.subject,
        purpose=request.purpose,
        decision_class=request.decision_class,
        proposed_action=request.proposed_action,
        proposed_value=request.proposed_value,
    )
    outcome = engine.evaluate(
        contract=spec,
        binding=binding,
        raw_reads=raw_reads,
        evidence=evidence,
        claims=list(request.claims),
        quarantined_classes=quarantines.memory_classes,
        capable_actions=capable,
        valid_time=decided_at,
        recorded_time=decided_at,
    )
    return snapshot_persist(
        principal=principal,
        spec=spec,
        sources=sources,
        content=outcome.content,
        issued_at=decided_at,
        quarantine_epoch=quarantines.epoch,
    )


def snapshot_persist(
    *,
    principal: Principal,
    spec: ContractSpec,
    sources: dict[str, Source],
    content: dict,
    issued_at: datetime,
    quarantine_epoch: int | None = None,
) -> DecisionSnapshot:
    digest = content_hash(content)
    try:
        return _snapshot_insert(
            principal=principal,
            spec=spec,
            sources=sources,
            content=content,
            issued_at=issued_at,
            digest=digest,
            quarantine_epoch=quarantine_epoch,
        )
    except IntegrityError:
        # Content-addressed: identical content is the identical snapshot, already stored.
        existing = DecisionSnapshot.objects.filter(content_hash=digest).first()
        if existing is None:
            raise
        return existing


def _snapshot_insert(
    *,
    principal: Principal,
    spec: ContractSpec,
    sources: dict[str, Source],
    content: dict,
    issued_at: datetime,
    digest: str,
    quarantine_epoch: int | None,
) -> DecisionSnapshot:
    binding = content["binding"]
    decision = content["decision"]
    with transaction.atomic():
        if quarantine_epoch is not None and not epoch_check(quarantine_epoch):
            raise QuarantineChanged
        snapshot = DecisionSnapshot.objects.create(
            snapshot_id=f"snap_{digest[:32]}",
            content_hash=digest,
            principal=principal,
            contract_id=spec.pk,
            subject=binding["subject"],
            purpose=binding["purpose"],
            decision_class=binding["decision_class"],
            proposed_action=binding["proposed_action"],
            result=decision["result"],
            completeness=content["completeness"],
            policy_version=decision["policy_version"],
            reducer_version=content["reducer_version"] or "",
            schema_version=content["schema_version"],
            valid_time_cutoff=issued_at,
            recorded_time_cutoff=issued_at,
            issued_at=issued_at,
            content=content,
        )
        StateRead.objects.bulk_create(
            StateRead(
                snapshot=snapshot,
                field=name,
                source=sources[item["source"]],
                required=item["required"],
                status=item["status"],
                value=item["value"],
                version=item["version"],
                observed_at=item["observed_at"],
                valid_from=item["valid_from"],
                recorded_at=item["recorded_at"],
                read_at=item["read_at"],
                max_age_seconds=item["max_age_seconds"],
                consistency=item["consistency"],
                evidence=item["evidence"],
                detail=item["detail"][:500],
            )
            for name, item in content["fields"].items()
        )
        if content["claims"]:
            ClaimVerdict.objects.bulk_create(
                ClaimVerdict(
                    snapshot=snapshot,
                    index=item["index"],
                    subject=item["subject"],
                    field=item["field"],
                    value=item["value"],
                    written_at=item["written_at"],
                    memory_class=item["memory_class"],
                    purpose=item["purpose"],
                    derived_from=item["derived_from"],
                    note=item["note"],
                    verdict=item["verdict"],
                    reason=item["reason"],
                    evidence=item["evidence"],
                )
                for item in content["claims"]
            )
        if content["contradictions"]:
            Contradiction.objects.bulk_create(
                Contradiction(
                    snapshot=snapshot,
                    kind=item["kind"],
                    subject=item["subject"],
                    field=item["field"],
                    state_value=item["state"]["value"],
                    state_source=item["state"]["source"],
                    state_ref=item["state"]["ref"],
                    other_value=item["other"]["value"],
                    other_source=item["other"]["source"],
                    other_ref=item["other"]["ref"],
                    detail=item["detail"][:300],
                    status=ContradictionStatus.OPEN,
                    detected_at=issued_at,
                )
                for item in content["contradictions"]
            )
        if decision["result"] == DecisionResult.ESCALATE:
            escalation_open_for_snapshot(
                snapshot=snapshot,
                owner=_escalation_owner(spec, sources, content),
                reasons=decision["reasons"],
                candidate_refs=[snapshot.snapshot_id]
                + [
                    item["other"]["ref"]
                    for item in content["contradictions"]
                    if item["kind"] == ContradictionKind.EVIDENCE_VS_STATE
                ],
                requested_by=principal,
            )
        snapshot_lineage(
            snapshot_id=snapshot.snapshot_id, decision_id=f"dec_{digest[:32]}", content=content
        )
        DecisionReceipt.objects.create(
            decision_id=f"dec_{digest[:32]}",
            snapshot=snapshot,
            proposed_action=binding["proposed_action"],
            result=decision["result"],
            permitted_actions=decision["permitted_actions"],
            reasons=decision["reasons"],
            policy_version=decision["policy_version"],
            issued_at=issued_at,
        )
    return snapshot


def _escalation_owner(spec: ContractSpec, sources: dict[str, Source], content: dict) -> str:
    """Route to the owner of the contradicted field's source, else of the first required one."""
    for item in content["contradictions"]:
        if item["kind"] == ContradictionKind.EVIDENCE_VS_STATE:
            return sources[item["state"]["source"]].owner
    first_required = next(spec_field for spec_field in spec.fields if spec_field.required)
    return sources[first_required.source].owner
