"""One home for the effect state machine: commit, the gate, readback, resolution, sweep.

`state` holds what every path shares (constants, the lock, the timeline, the accept
transition); each other module is one stage. Callers import from here.
"""

from reconcile_app.services.effects.commit import (
    CommitResult,
    check_idempotency_key,
    effect_commit,
    effect_fingerprint,
    parse_if_match,
)
from reconcile_app.services.effects.compensation import compensation_live, effect_compensate
from reconcile_app.services.effects.gate import PreconditionFailed
from reconcile_app.services.effects.readback import OwnerUnavailable, effect_readback
from reconcile_app.services.effects.resolution import (
    effect_request_check,
    effect_resolve_manually,
    effect_resolve_unknown,
)
from reconcile_app.services.effects.state import (
    IN_FLIGHT_RETRY_AFTER_SECONDS,
    OWNER_RETRY_AFTER_SECONDS,
    READBACK_RECHECK_SECONDS,
    RESOLUTION_BACKOFF,
    RETRYABLE_REJECTIONS,
    effect_accept,
    effect_check_failed,
)
from reconcile_app.services.effects.sweep import effects_sweep

__all__ = [
    "IN_FLIGHT_RETRY_AFTER_SECONDS",
    "OWNER_RETRY_AFTER_SECONDS",
    "READBACK_RECHECK_SECONDS",
    "RESOLUTION_BACKOFF",
    "RETRYABLE_REJECTIONS",
    "CommitResult",
    "OwnerUnavailable",
    "PreconditionFailed",
    "check_idempotency_key",
    "compensation_live",
    "effect_accept",
    "effect_check_failed",
    "effect_commit",
    "effect_compensate",
    "effect_fingerprint",
    "effect_readback",
    "effect_request_check",
    "effect_resolve_manually",
    "effect_resolve_unknown",
    "effects_sweep",
    "parse_if_match",
]
