"""Every enumerated value of reconcile_app's domain, in one place (docs/api.md names them)."""

from __future__ import annotations

from django.db import models


class Consistency(models.TextChoices):
    LINEARIZABLE = "linearizable"
    READ_YOUR_WRITES = "read_your_writes"
    EVENTUAL = "eventual"
    BATCH = "batch"


class ContractStatus(models.TextChoices):
    DRAFT = "draft"
    ACTIVE = "active"
    RETIRED = "retired"


class ObligationLevel(models.TextChoices):
    """Seed 002's reconstruction obligation (reconcile_app/obligation.py)."""

    RECONSTRUCT = "reconstruct"
    NARRATIVE_OK = "narrative_ok"


class ActivationStatus(models.TextChoices):
    """A request to make a contract version active: its release gates run, then it goes live
    (`activated`), or a gate fails (`refused`), or the run itself broke (`failed`)."""

    RUNNING = "running"
    ACTIVATED = "activated"
    REFUSED = "refused"
    FAILED = "failed"


class ReadStatus(models.TextChoices):
    OK = "ok"
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"
    STALE = "stale"
    QUARANTINED = "quarantined"
    CONFLICT = "conflict"


class Completeness(models.TextChoices):
    COMPLETE = "complete"
    DEGRADED = "degraded"
    INCOMPLETE = "incomplete"


class DecisionResult(models.TextChoices):
    ALLOW = "allow"
    DENY = "deny"
    ESCALATE = "escalate"
    REFUSE = "refuse"


class Verdict(models.TextChoices):
    CONFIRMED = "confirmed"
    SUPERSEDED = "superseded"
    CONTRADICTED = "contradicted"
    UNVERIFIED = "unverified"
    OUT_OF_SCOPE = "out_of_scope"
    STALE_STATE = "stale_state"
    QUARANTINED = "quarantined"


class EvidenceKind(models.TextChoices):
    OBSERVATION = "observation"
    DOCUMENT = "document"
    POLICY_RESULT = "policy_result"
    MODEL_PROPOSAL = "model_proposal"
    TOOL_REQUEST = "tool_request"
    EFFECT_RECEIPT = "effect_receipt"
    READBACK = "readback"
    CORRECTION = "correction"
    # The subject agreed to a preference being kept (seed 000: "a preference needs subject
    # binding"); a preference memory must derive from one.
    CONSENT = "consent"


class MemoryStatus(models.TextChoices):
    CURRENT = "current"  # admitted directly, in force
    SUGGESTED = "suggested"  # awaiting review: never in force
    ACTIVE = "active"  # promoted by a reviewer, in force
    REJECTED = "rejected"  # a reviewer refused its promotion
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    HISTORICAL_ONLY = "historical_only"


# A memory in one of these statuses is in force: it may be recalled and may be superseded.
MEMORY_IN_FORCE = (MemoryStatus.CURRENT, MemoryStatus.ACTIVE)


class MemoryKind(models.TextChoices):
    """Seed 000's kinds of memory, each with its own admission and retirement rules."""

    EPISODIC = "episodic"  # what happened: admitted with provenance, expires at its TTL
    PREFERENCE = "preference"  # bound to a subject by consent; a newer one supersedes
    PROCEDURAL = (
        "procedural"  # how to do something: a reviewer promotes it, or it stays a suggestion
    )
    POLICY = "policy"  # a rule-like belief: a reviewer promotes it, or it stays a suggestion
    FACT = "fact"  # an operational fact (fact_key, owner, source revision): selected by rule


class MemoryAdmission(models.TextChoices):
    DIRECT = "direct"
    REVIEW = "review"


class PrincipalKind(models.TextChoices):
    AGENT = "agent"
    PERSON = "person"


class ContradictionKind(models.TextChoices):
    # Memory disagrees with state: preserved for review, never visible to policy.
    MEMORY_VS_STATE = "memory_vs_state"
    # Retained evidence newer than the state's valid time disagrees with it: two sources
    # disagree without a clean temporal replacement, which the contract's policy handles.
    EVIDENCE_VS_STATE = "evidence_vs_state"


class ContradictionStatus(models.TextChoices):
    OPEN = "open"
    RESOLVED = "resolved"


class ContradictionPolicy(models.TextChoices):
    ESCALATE = "escalate"
    REFUSE = "refuse"


class Role(models.TextChoices):
    OPERATOR = "operator"
    REVIEWER = "reviewer"
    AUDITOR = "auditor"
    AGENT = "agent"


BADGE_COLOURS: dict[str, str] = {
    # One colour per value across the console.
    "ok": "green",
    "allow": "green",
    "confirmed": "green",
    "complete": "green",
    "current": "green",
    "resolved": "green",
    "deny": "red",
    "refuse": "red",
    "contradicted": "red",
    "incomplete": "red",
    "unavailable": "red",
    "timeout": "red",
    "conflict": "red",
    "escalate": "amber",
    "degraded": "amber",
    "stale": "amber",
    "stale_state": "amber",
    "superseded": "amber",
    "open": "amber",
    "quarantined": "purple",
    "unverified": "grey",
    "out_of_scope": "grey",
    "expired": "grey",
    "historical_only": "grey",
    # Memories under review: a suggestion is never in force until promoted.
    "suggested": "blue",
    "active": "green",
    # Escalations, facts, effects, quarantines, corrections.
    "approved": "green",
    "rejected": "red",
    "frozen": "purple",
    "allowed": "green",
    "recorded": "blue",
    "sent": "blue",
    "accepted": "blue",
    "verified": "green",
    "unknown": "amber",
    "postcondition_failed": "red",
    "not_executed": "grey",
    "authority_ambiguous": "amber",
    "owner_missing": "amber",
    "no_current_record": "grey",
    "current_authority_unavailable": "red",
    "no_authority_source": "grey",
    "applying": "purple",
    "applied": "purple",
    "lifted": "grey",
    "tainted": "red",
    "computing": "blue",
    # Drill and benchmark runs; contract activations share running and failed.
    "running": "blue",
    "failed": "red",
    # Bulk triage jobs and their items.
    "pending": "blue",
    "done": "green",
    "skipped": "grey",
    "still_unknown": "amber",
    # Contract versions, their activations and release gates.
    "draft": "blue",
    "retired": "grey",
    "activated": "green",
    "refused": "red",
    "passed": "green",
    "not_required": "grey",
}


class EscalationStatus(models.TextChoices):
    OPEN = "open"
    APPROVED = "approved"
    REJECTED = "rejected"


# The code of an escalation that reviews a suggested memory (services/promotions.py).
PROMOTION = "promotion"
# What an agent may still do about what an escalation asks, until it is decided.
READ_HISTORY = ["read_history"]


class QuarantineScope(models.TextChoices):
    SOURCE = "source"
    MEMORY_CLASS = "memory_class"
    MEMORY = "memory"  # one memory record: claims citing it are quarantined, nothing else


class QuarantineStatus(models.TextChoices):
    APPLYING = "applying"
    APPLIED = "applied"
    LIFTED = "lifted"


class CorrectionStatus(models.TextChoices):
    COMPUTING = "computing"
    COMPLETE = "complete"


class PolicyRuleKind(models.TextChoices):
    DENY = "deny"
    ESCALATE = "escalate"
    ALLOW = "allow"


class EffectStatus(models.TextChoices):
    RECORDED = "recorded"
    SENT = "sent"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    UNKNOWN = "unknown"
    VERIFIED = "verified"
    POSTCONDITION_FAILED = "postcondition_failed"
    NOT_EXECUTED = "not_executed"


# Sent to its owner and not yet concluded (awaiting readback, or its outcome unknown): what a
# source's quarantine holds up.
EFFECT_PENDING_STATUSES = (EffectStatus.SENT, EffectStatus.ACCEPTED, EffectStatus.UNKNOWN)


class BulkJobKind(models.TextChoices):
    """What a bulk triage job acts on."""

    EFFECTS = "effects"
    CONTRADICTIONS = "contradictions"


class BulkJobAction(models.TextChoices):
    READBACK = "readback"  # re-check now: a readback, or a resolution of an unknown outcome
    RESOLVE = "resolve"  # an operator's verdict (effects: with an outcome; contradictions: a note)


class BulkJobStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"


class BulkItemState(models.TextChoices):
    """One item of a bulk job: waiting, acted on, found already concluded, re-checked and
    still unknown, or refused."""

    PENDING = "pending"
    DONE = "done"
    SKIPPED = "skipped"
    # Re-checked without error, and the owner could not settle it: unresolved, an outcome of
    # its own (DESIGN: succeeded | failed | unresolved), neither done for good nor an error.
    STILL_UNKNOWN = "still_unknown"
    FAILED = "failed"
