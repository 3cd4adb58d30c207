"""The authorization matrix itself: one row per endpoint and method, with the outcome each
persona must get for its own object and for another's. See tests/test_authorization_matrix.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from tests.authorization.world import World
from tests.conftest import COLLECTIONS

OK, HIDDEN, PEOPLE, NO, ANON = "ok", "hidden", "people_only", "no", "anon"
PERSONAS = ("capable", "incapable", "operator", "reviewer", "auditor", "anonymous")
# Shorthands for the common rows, in PERSONAS order.
EVERYONE = (OK, OK, OK, OK, OK, ANON)
PEOPLE_READ = (PEOPLE, PEOPLE, OK, OK, OK, ANON)
OPERATORS = (PEOPLE, PEOPLE, OK, NO, NO, ANON)
REVIEWERS = (PEOPLE, PEOPLE, NO, OK, NO, ANON)
OWN_READ = (OK, HIDDEN, OK, OK, OK, ANON)
OTHERS_READ = (HIDDEN, HIDDEN, OK, OK, OK, ANON)
AGENT_WRITES = (OK, NO, OK, NO, NO, ANON)


Path = Callable[[World, SimpleNamespace], str]


@dataclass(frozen=True)
class Row:
    name: str  # the URL name
    method: str
    path: Path
    expect: tuple[str, ...]  # for the capable agent's own object (or no object)
    # For another principal's object; None when the endpoint names no principal's object.
    expect_other: tuple[str, ...] | None = None
    body: Callable[[World, SimpleNamespace], Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def fixed(path: str) -> Path:
    return lambda world, mine: path


SANDBOX = "/api/v1/sandbox/case-service"
RECONCILE = {
    "subject": "acct-own",
    "purpose": "collections",
    "decision_class": COLLECTIONS,
    "proposed_action": "retain_manual_review",
}
RATIONALE = {"rationale": "matrix"}
REASON = {"reason": "matrix"}

MATRIX: tuple[Row, ...] = (
    Row("api-me", "get", fixed("/api/v1/me"), EVERYONE),
    Row(
        "api-reconcile",
        "post",
        fixed("/api/v1/reconcile"),
        (OK, NO, NO, NO, NO, ANON),
        body=lambda w, m: RECONCILE,
    ),
    Row("api-snapshots", "get", fixed("/api/v1/snapshots"), EVERYONE),
    Row(
        "api-snapshot",
        "get",
        lambda w, m: f"/api/v1/snapshots/{m.snapshot_id}",
        OWN_READ,
        OTHERS_READ,
    ),
    Row(
        "api-snapshot-replay",
        "post",
        lambda w, m: f"/api/v1/snapshots/{m.snapshot_id}/replay",
        OWN_READ,
        OTHERS_READ,
        body=lambda w, m: {"mode": "as_recorded"},
    ),
    Row("api-evidence", "get", fixed("/api/v1/evidence"), EVERYONE),
    Row(
        "api-evidence",
        "post",
        fixed("/api/v1/evidence"),
        AGENT_WRITES,
        body=lambda w, m: {
            "kind": "observation",
            "subject": "acct-own",
            "field": "collections_status",
            "value": "x",
            "source": "case-ledger",
            "observed_at": "2026-11-01T00:00:00Z",
        },
    ),
    Row(
        "api-evidence-detail",
        "get",
        lambda w, m: f"/api/v1/evidence/{m.evidence_id}",
        OWN_READ,
        OTHERS_READ,
    ),
    Row("api-memories", "get", fixed("/api/v1/memories"), EVERYONE),
    Row(
        "api-memories",
        "post",
        fixed("/api/v1/memories"),
        (OK, OK, OK, NO, NO, ANON),
        body=lambda w, m: {
            "memory_class": "episodic",
            "subject": "acct-own",
            "purpose": "collections",
            "field": "collections_status",
            "value": "x",
            "derived_from": [w.own.evidence_id],
        },
    ),
    Row("api-memory", "get", lambda w, m: f"/api/v1/memories/{m.memory_id}", OWN_READ, OTHERS_READ),
    # Every principal reads the declared classes (what it may write); the counts are scoped.
    Row("api-contracts", "get", fixed("/api/v1/contracts"), PEOPLE_READ),
    Row("api-contract", "get", fixed(f"/api/v1/contracts/{COLLECTIONS}/7.3"), PEOPLE_READ),
    Row(
        "api-contract-activate",
        "post",
        fixed(f"/api/v1/contracts/{COLLECTIONS}/7.3/activate"),
        REVIEWERS,
        body=lambda w, m: RATIONALE,
    ),
    Row("api-memory-classes", "get", fixed("/api/v1/memory-classes"), EVERYONE),
    Row("api-memory-class", "get", fixed("/api/v1/memory-classes/episodic"), EVERYONE),
    Row("api-contradictions", "get", fixed("/api/v1/contradictions"), PEOPLE_READ),
    Row(
        "api-contradiction-resolve",
        "post",
        lambda w, m: f"/api/v1/contradictions/{w.contradiction_id}/resolve",
        OPERATORS,
        body=lambda w, m: {"note": "matrix"},
    ),
    Row(
        "api-contradictions-bulk",
        "post",
        fixed("/api/v1/contradictions/bulk"),
        OPERATORS,
        body=lambda w, m: {"ids": [w.contradiction_id], "note": "matrix"},
    ),
    Row("api-corrections", "get", fixed("/api/v1/corrections"), PEOPLE_READ),
    Row(
        "api-corrections",
        "post",
        fixed("/api/v1/corrections"),
        OPERATORS,
        body=lambda w, m: {"evidence_id": w.own.evidence_id, **REASON},
    ),
    Row(
        "api-correction", "get", lambda w, m: f"/api/v1/corrections/{w.correction_id}", PEOPLE_READ
    ),
    Row("api-audit", "get", fixed("/api/v1/audit"), PEOPLE_READ),
    Row("api-quarantines", "get", fixed("/api/v1/quarantines"), PEOPLE_READ),
    Row(
        "api-quarantines",
        "post",
        fixed("/api/v1/quarantines"),
        OPERATORS,
        body=lambda w, m: {"scope": "memory_class", "target": "episodic", **REASON},
    ),
    Row(
        "api-quarantine", "get", lambda w, m: f"/api/v1/quarantines/{w.quarantine_id}", PEOPLE_READ
    ),
    Row(
        "api-quarantine-lift",
        "post",
        lambda w, m: f"/api/v1/quarantines/{w.quarantine_id}/lift",
        OPERATORS,
        body=lambda w, m: REASON,
    ),
    Row("api-effects", "get", fixed("/api/v1/effects"), EVERYONE),
    # Committing on a snapshot: only the principal it was issued to (docs/api.md: 403
    # `decision_not_allowed` for another principal's snapshot).
    Row(
        "api-effects",
        "post",
        fixed("/api/v1/effects"),
        (OK, NO, NO, NO, NO, ANON),
        (NO, NO, NO, NO, NO, ANON),
        body=lambda w, m: {
            "snapshot_id": m.snapshot_id,
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        headers={"HTTP_IDEMPOTENCY_KEY": "k-matrix", "HTTP_IF_MATCH": '"7"'},
    ),
    Row("api-effect", "get", lambda w, m: f"/api/v1/effects/{m.effect_key}", OWN_READ, OTHERS_READ),
    Row(
        "api-effect-readback",
        "post",
        lambda w, m: f"/api/v1/effects/{m.effect_key}/readback",
        OPERATORS,
        OPERATORS,
    ),
    Row(
        "api-effect-escalate",
        "post",
        lambda w, m: f"/api/v1/effects/{m.effect_key}/escalate",
        OPERATORS,
        OPERATORS,
        body=lambda w, m: REASON,
    ),
    # An operator's compensation reaches the service (whatever it then answers); agents are
    # refused as people_only, reviewers and auditors by role.
    Row(
        "api-effect-compensate",
        "post",
        lambda w, m: f"/api/v1/effects/{m.effect_key}/compensate",
        OPERATORS,
        OPERATORS,
        body=lambda w, m: {
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
            **REASON,
        },
    ),
    Row(
        "api-effect-resolve",
        "post",
        lambda w, m: f"/api/v1/effects/{m.effect_key}/resolve",
        OPERATORS,
        OPERATORS,
        body=lambda w, m: {"outcome": "not_executed", **REASON},
    ),
    Row(
        "api-effects-bulk",
        "post",
        fixed("/api/v1/effects/bulk"),
        OPERATORS,
        body=lambda w, m: {"keys": [w.own.effect_key], "action": "readback", **REASON},
    ),
    # The effect the capable agent committed with Idempotency-Key "bulk" (world.py).
    Row("api-effects-bulk", "get", fixed("/api/v1/effects/bulk"), OWN_READ),
    Row("api-job", "get", lambda w, m: f"/api/v1/jobs/{w.job_id}", PEOPLE_READ),
    Row(
        "api-job-cancel",
        "post",
        lambda w, m: f"/api/v1/jobs/{w.job_id}/cancel",
        OPERATORS,
        body=lambda w, m: REASON,
    ),
    Row("api-fact-current", "get", fixed("/api/v1/facts/baseline.math-eval/current"), EVERYONE),
    Row("api-escalations", "get", fixed("/api/v1/escalations"), EVERYONE),
    Row(
        "api-escalation",
        "get",
        lambda w, m: f"/api/v1/escalations/{m.escalation_id}",
        OWN_READ,
        OTHERS_READ,
    ),
    Row(
        "api-escalation-approve",
        "post",
        lambda w, m: f"/api/v1/escalations/{m.escalation_id}/approve",
        REVIEWERS,
        REVIEWERS,
        body=lambda w, m: RATIONALE,
    ),
    Row(
        "api-escalation-reject",
        "post",
        lambda w, m: f"/api/v1/escalations/{m.escalation_id}/reject",
        REVIEWERS,
        REVIEWERS,
        body=lambda w, m: RATIONALE,
    ),
    Row(
        "api-sandbox-record",
        "get",
        fixed(f"{SANDBOX}/records/acct-own/collections_status"),
        OPERATORS,
    ),
    Row(
        "api-sandbox-record",
        "put",
        fixed(f"{SANDBOX}/records/acct-own/collections_status"),
        OPERATORS,
        body=lambda w, m: {"value": "PWNED"},
    ),
    Row(
        "api-sandbox-effects",
        "post",
        fixed(f"{SANDBOX}/effects"),
        OPERATORS,
        body=lambda w, m: {
            "subject": "acct-own",
            "field": "collections_status",
            "action": "x",
            "resulting_value": "PWNED",
        },
        headers={"HTTP_IDEMPOTENCY_KEY": "k-sandbox", "HTTP_IF_MATCH": '"1"'},
    ),
    Row("api-sandbox-effect", "get", lambda w, m: f"{SANDBOX}/effects/{m.effect_key}", OPERATORS),
    Row("api-sandbox-events", "get", fixed(f"{SANDBOX}/events?subject=acct-own"), OPERATORS),
    Row(
        "api-sandbox-events",
        "post",
        fixed(f"{SANDBOX}/events"),
        OPERATORS,
        body=lambda w, m: {"event_id": "e-matrix", "type": "x", "subject": "acct-own"},
    ),
    Row(
        "api-sandbox-authority",
        "get",
        fixed("/api/v1/sandbox/eval-registry/authority/baseline.math-eval"),
        OPERATORS,
    ),
    Row(
        "api-sandbox-authority",
        "put",
        fixed(f"{SANDBOX}/authority/baseline.x"),
        OPERATORS,
        body=lambda w, m: {"owner": "o", "source_revision": "r"},
    ),
    Row(
        "api-sandbox-faults",
        "post",
        fixed(f"{SANDBOX}/faults"),
        OPERATORS,
        body=lambda w, m: {"kind": "lag", "seconds": 1, "count": 1},
    ),
    Row("api-sandbox-faults", "delete", fixed(f"{SANDBOX}/faults"), OPERATORS),
    Row("api-metrics", "get", fixed("/api/v1/metrics"), PEOPLE_READ),
    Row(
        "api-blast-radius",
        "get",
        fixed("/api/v1/lineage/blast-radius?memory_class=episodic"),
        PEOPLE_READ,
    ),
    Row(
        "api-lineage-descendants",
        "get",
        lambda w, m: f"/api/v1/lineage/snapshot:{m.snapshot_id}/descendants",
        PEOPLE_READ,
        PEOPLE_READ,
    ),
    Row(
        "api-lineage-ancestors",
        "get",
        lambda w, m: f"/api/v1/lineage/snapshot:{m.snapshot_id}/ancestors",
        PEOPLE_READ,
        PEOPLE_READ,
    ),
    Row(
        "api-lineage-prov",
        "get",
        lambda w, m: f"/api/v1/lineage/snapshot:{m.snapshot_id}/prov",
        PEOPLE_READ,
        PEOPLE_READ,
    ),
    Row("api-schema", "get", fixed("/api/schema/"), (OK, OK, OK, OK, OK, OK)),
    Row("api-docs", "get", fixed("/api/docs/"), (OK, OK, OK, OK, OK, OK)),
    Row("metrics", "get", fixed("/metrics"), PEOPLE_READ),
    # For load balancers and orchestrators: open to all, and they say only "ok" / "unavailable".
    Row("healthz", "get", fixed("/healthz"), (OK, OK, OK, OK, OK, OK)),
    Row("readyz", "get", fixed("/readyz"), (OK, OK, OK, OK, OK, OK)),
)
