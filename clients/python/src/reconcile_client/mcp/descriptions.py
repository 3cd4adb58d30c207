"""What the MCP tools tell a model: the protocol's rules, stated where it will look.

A model learns the protocol from these texts alone, so each states the rule that keeps it
safe at the point it applies: memory advises, state authorises; commit only what a snapshot
allows, with its If-Match; an unknown outcome is asked about, never blindly sent again.
"""

INSTRUCTIONS = """\
Reconcile is the boundary between you and the systems you act on. Memory may advise; state
must authorise. Before any action with consequences: call `reconcile` (your remembered
beliefs go in `claims`, where they are checked, never trusted), act only if the snapshot's
`actions` map lists your action (a decision `allow`, or an `escalate` whose escalation a
person approved: see `escalation_status`), then `commit_effect` with that snapshot. An
`unknown` outcome means nobody knows yet whether it happened: ask `effect_status` with the
same idempotency_key; never commit it again under a new key. A `commit_effect` call cancelled,
timed out or left without an answer may have happened too: call `commit_effect` again with
exactly the same arguments (the same key goes again, never a second effect)."""

RECONCILE = """\
Ask for a decision before acting. Reads the current state from each fact's owner, checks your
remembered claims against it (verdicts: confirmed, superseded, contradicted, unverified,
out_of_scope, stale_state, quarantined) and applies the decision class's policy to the state
alone. Claims never authorise anything: a confirmed claim only tells you your memory agrees.
Returns the snapshot: `decision.result` (allow | deny | escalate | refuse, with `reasons`),
`fields` (value and version per field), `claims` (a verdict per claim) and `actions` (for each
action it authorises: `field`, `if_match`, `commit_deadline`). Commit only what `actions`
lists, before its deadline; on deny or refuse, do not act; on escalate, a person decides
(`escalation_status`): once approved, reconcile again and commit what that snapshot lists."""

COMMIT = """\
Commit an action the snapshot authorises: one its `actions` lists (decision `allow`, or
`escalate` once a person approved the escalation; its decision stays `escalate`). The
If-Match is the snapshot's `actions[action].if_match` (taken from the snapshot when you leave
`if_match` out); the idempotency_key is made for you when absent and returned: keep it (or
pass your own, any new unique string, to hold it before the call). If this call is cancelled,
times out or gets no answer, the commit may have happened: call commit_effect again with
exactly the same arguments (the server sends the same commit under the same key, and answers
from its record, `replayed: true`: never a second effect), or effect_status with your own
key. A lost
answer is retried with the same key only. The answer's `status`: `accepted` (receipt), or
`unknown` (the owner did not answer: it may or may not have happened — call `effect_status`
with the same idempotency_key, NEVER commit again with another key). Errors you will meet:
412 version_changed (the state moved since the snapshot: reconcile again), 403
decision_not_allowed / escalation_pending, 409 snapshot_tainted / contract_superseded
(reconcile again), 423 source_quarantined (wait for people), 503 owner_unavailable (the owner
never took it: commit again with the error's idempotency_key after retry_after, never a new
key), 409 owner_refused (the owner refuses the command itself: do not retry), an error with
code commit_outcome_unknown (no answer: call `effect_status` with its idempotency_key)."""

EFFECT_STATUS = """\
Where an effect stands, by its idempotency_key: recorded, sent, accepted, rejected, unknown,
verified, postcondition_failed, not_executed, with its timeline (readbacks, resolutions). Use
it after an `unknown` outcome instead of committing again. With `wait_seconds`, polls until
the effect is final (verified, postcondition_failed, rejected, not_executed) or the time is
up; an `unknown` still unresolved then is for people to resolve."""

CURRENT_FACT = """\
The current record for an operational fact key (e.g. `baseline.math-eval`), selected by the
owner's rule: the owner and revision come from the owner's system, never from memory. A key
with no current record, an ambiguous authority or an unavailable owner answers an error with
its `candidates` (and `escalation_id` when people were asked)."""

WRITE_MEMORY = """\
Remember something, with where it came from (`derived_from`: evidence ids, snapshot ids or
memory ids; required). A memory advises future reasoning; it never authorises an action: pass
it as a claim to `reconcile` (by `memory_id`) and let the state decide. Some classes
(procedural, policy) stay `suggested` until a reviewer promotes them."""

ATTEST = """\
Append an evidence entry (an observation, a document...) for a source you may vouch for. The
ledger is append-only and hash-chained: nothing is updated or deleted; to replace an entry,
name it in `supersedes`. `observed_at` is when it was observed (RFC 3339, not in the future)."""

ESCALATION_STATUS = """\
Where an escalation stands, by the `escalation_id` an `escalate` snapshot (or a refusal)
named: `status` open | approved | rejected, with `decided_by`, `rationale` and `write_allowed`.
A person decides it; do not act while it is open, and never on a rejection. Once approved,
call `reconcile` again with the same request: its snapshot joins the approved escalation and
lists your action in `actions` (at the state the reviewer saw, within the commit window from
the approval); then `commit_effect` with that snapshot. Poll sparingly: people take minutes."""

LIST_MEMORIES = """\
Your own memories matching the filters (subject, field, fact_key, memory_class, status; the
first 500): their `memory_id`s are what to pass to `reconcile` as claims (`{"memory_id": …}`),
where the state checks them. A memory's `status` says whether it is in force (current,
active), awaiting review (suggested) or no longer (superseded, expired, rejected,
historical_only); none of them authorises an action."""
