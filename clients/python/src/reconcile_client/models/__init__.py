"""What the API answers, as frozen dataclasses typed against its OpenAPI schema.

Each field is named exactly as the JSON property it is read from (tests/clients checks every
one against the served schema); the whole answer stays available as `raw`, so a property the
server adds later is never lost and the MCP server hands back the API's own JSON. Fields
whose metadata says `wire: False` are the client's own (`replayed`, from the
`Idempotent-Replayed` header, and `raw`).

Values are taken as the server sends them: an enumeration the server extends later arrives as
its plain string rather than failing the parse.
"""

from reconcile_client.models.effect import (
    FINAL_EFFECT_STATUSES,
    Effect,
    EffectEvent,
    EffectStatus,
    Receipt,
)
from reconcile_client.models.records import (
    DecisionClass,
    Escalation,
    Evidence,
    Fact,
    Me,
    Memory,
)
from reconcile_client.models.replay import Replay, ReplayDifference, ReplayMode
from reconcile_client.models.snapshot import (
    ActionHandle,
    ClaimVerdict,
    Completeness,
    Contradiction,
    ContradictionSide,
    Decision,
    DecisionResult,
    FieldRead,
    FieldStatus,
    ManifestEntry,
    Reason,
    Snapshot,
    Verdict,
)

__all__ = [
    "FINAL_EFFECT_STATUSES",
    "ActionHandle",
    "ClaimVerdict",
    "Completeness",
    "Contradiction",
    "ContradictionSide",
    "Decision",
    "DecisionClass",
    "DecisionResult",
    "Effect",
    "EffectEvent",
    "EffectStatus",
    "Escalation",
    "Evidence",
    "Fact",
    "FieldRead",
    "FieldStatus",
    "ManifestEntry",
    "Me",
    "Memory",
    "Reason",
    "Receipt",
    "Replay",
    "ReplayDifference",
    "ReplayMode",
    "Snapshot",
    "Verdict",
]
