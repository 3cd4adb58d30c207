"""The sandbox: a built-in reference owner system with versioned records and fault injection.

It is a real owner system, not a mock: records live in the database, every write adds one to
the version with a compare-and-set, and faults make it misbehave the way real owners do.
"""

from sandbox_app.services.effects import (
    SandboxTimeout,
    sandbox_effect_apply,
    sandbox_effect_lookup,
)
from sandbox_app.services.events import (
    SandboxEventsRead,
    sandbox_event_append,
    sandbox_events_read,
)
from sandbox_app.services.faults import (
    SandboxNoAnswer,
    SandboxUnavailable,
    sandbox_fault_add,
    sandbox_faults_clear,
)
from sandbox_app.services.records import (
    SandboxAuthorityAnswer,
    SandboxRead,
    sandbox_authority_read,
    sandbox_authority_write,
    sandbox_record_read,
    sandbox_record_write,
    sandbox_records_read,
)

__all__ = [
    "SandboxAuthorityAnswer",
    "SandboxEventsRead",
    "SandboxNoAnswer",
    "SandboxRead",
    "SandboxTimeout",
    "SandboxUnavailable",
    "sandbox_authority_read",
    "sandbox_authority_write",
    "sandbox_effect_apply",
    "sandbox_effect_lookup",
    "sandbox_event_append",
    "sandbox_events_read",
    "sandbox_fault_add",
    "sandbox_faults_clear",
    "sandbox_record_read",
    "sandbox_record_write",
    "sandbox_records_read",
]
