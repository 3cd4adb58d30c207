"""An example agent that acts through Reconcile: memory advises, state authorises.

For each subject it is given, it recalls what it remembers, reconciles before acting (its
memories go in as claims, to be checked, never trusted), commits only what the snapshot
authorises, waits for the outcome and reacts to each result and problem code; it remembers
what it learnt, with where it learnt it.

Against `./dev up` (the demo estate; the demo agent's key is in var/demo-agent.key):

    python examples/agent.py --key "$(cat var/demo-agent.key)" P17

picks pallet P17 (decision class `warehouse-pick`); a second run is denied (`already_picked`).
RECONCILE_URL and RECONCILE_API_KEY are read when --url and --key are not given.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from reconcile_client import (
    CommitOutcomeUnknown,
    ContractSuperseded,
    Effect,
    EscalationPending,
    Forbidden,
    Locked,
    NotAuthorised,
    NotFound,
    OwnerRefused,
    OwnerUnavailable,
    PreconditionFailed,
    RateLimited,
    ReconcileClient,
    ReconcileError,
    Snapshot,
    SnapshotTainted,
    TransportError,
    Unavailable,
)

# How often one subject is reconciled again after the state moved under a commit.
MAX_ROUNDS = 3
# How often one command is sent under its key while it was not taken (the owner unreachable,
# the agent throttled, the command never reaching Reconcile).
OWNER_ATTEMPTS = 3
# The longest it waits before asking again, whatever Retry-After says (seconds).
LONGEST_PAUSE = 5.0


class NeverArrived(Exception):
    """After a commit went unanswered, Reconcile holds nothing under its key: the command
    never reached it, so the same command may go again under the same key."""

    def __init__(self, idempotency_key: str | None) -> None:
        super().__init__(idempotency_key)
        self.idempotency_key = idempotency_key
        self.code = "never_arrived"
        self.retry_after: float | None = None


@dataclass(frozen=True)
class Task:
    """What the agent is asked to do to each subject: one action, writing one value."""

    decision_class: str
    purpose: str
    action: str
    field: str
    value: Any
    memory_class: str


@dataclass
class Agent:
    client: ReconcileClient
    task: Task
    say: Callable[[str], Any] = print
    wait_seconds: float = 30.0
    pause_seconds: float = 1.0
    # The memory it holds as true for each subject's field: what a new one supersedes.
    believed: dict[str, str | None] = field(default_factory=dict)

    def run(self, subjects: Sequence[str]) -> dict[str, str]:
        return {subject: self.act(subject) for subject in subjects}

    def act(self, subject: str) -> str:
        """One subject, from recall to a settled outcome. Returns how it ended."""
        for _ in range(MAX_ROUNDS):
            try:
                snapshot = self.decide(subject)
            except RateLimited as slow:
                # Too many requests: nothing was decided. Ask again when the server says.
                pause = min(slow.retry_after or self.pause_seconds, LONGEST_PAUSE)
                self.say(f"{subject}: {slow.code}; deciding again in {pause:g} s")
                time.sleep(pause)
                continue
            outcome = self.react(subject, snapshot)
            if outcome != "again":
                return outcome
            time.sleep(self.pause_seconds)
        self.say(f"{subject}: gave up after {MAX_ROUNDS} rounds: the state keeps moving")
        return "gave_up"

    def decide(self, subject: str) -> Snapshot:
        """Recall, then reconcile with what was recalled as claims; learn from the verdicts."""
        task = self.task
        recalled = self.client.memories(subject=subject, field=task.field, status="current")
        self.say(f"{subject}: recalled {len(recalled)} memor{'y' if len(recalled) == 1 else 'ies'}")
        snapshot = self.client.reconcile(
            subject=subject,
            purpose=task.purpose,
            decision_class=task.decision_class,
            proposed_action=task.action,
            claims=[{"memory_id": memory.memory_id} for memory in recalled],
        )
        read = snapshot.fields.get(task.field)
        state = read.value if read is not None else None
        for claim in snapshot.claims:
            self.say(f"{subject}: memory {claim.value!r} is {claim.verdict} (state: {state!r})")
        confirmed = [c.memory_id for c in snapshot.claims if c.verdict == "confirmed"]
        replaced = [c.memory_id for c in snapshot.claims if c.verdict == "superseded"]
        self.believed[subject] = confirmed[0] if confirmed else None
        if replaced and not confirmed and read is not None and read.status == "ok":
            # A later, evidenced state replaced what it remembered: learn the new value. (A
            # contradicted memory is not overwritten: the disagreement stays for review.)
            self.believed[subject] = self.relearn(snapshot, replaced[0])
        return snapshot

    def relearn(self, snapshot: Snapshot, outdated: str | None) -> str:
        """Replace an outdated memory with what the owner says now, derived from the
        evidence that supports it (or the snapshot that read it)."""
        read = snapshot.fields[self.task.field]
        memory = self.client.remember(
            memory_class=self.task.memory_class,
            subject=snapshot.subject,
            purpose=self.task.purpose,
            field=self.task.field,
            value=read.value,
            derived_from=list(read.evidence) or [snapshot.snapshot_id],
            supersedes=outdated,
            note=f"read from {read.source} at version {read.version}",
        )
        self.say(f"{snapshot.subject}: remembered {read.value!r} ({memory.memory_id})")
        return memory.memory_id

    def react(self, subject: str, snapshot: Snapshot) -> str:
        result = snapshot.decision.result
        reasons = ", ".join(snapshot.decision.codes) or "-"
        self.say(f"{subject}: decision {result} ({reasons})")
        if result == "escalate":
            if snapshot.authorises(self.task.action):
                # The question was asked before and a reviewer approved it: this snapshot
                # joined that escalation and lists the action (`actions`) while the approval's
                # commit window is open, at the state the reviewer saw.
                self.say(f"{subject}: escalation {snapshot.escalation_id} approved")
                return self.commit(subject, snapshot)
            self.say(f"{subject}: a reviewer decides (escalation {snapshot.escalation_id})")
            return "escalated"
        if result == "refuse":
            # The state could not be read well enough to decide: stale, unavailable...
            unreadable = {"stale_state", "state_unavailable"} & set(snapshot.decision.codes)
            return "again" if unreadable else "refused"
        if not snapshot.authorises(self.task.action):
            return "denied"
        return self.commit(subject, snapshot)

    def commit(self, subject: str, snapshot: Snapshot) -> str:
        key: str | None = None
        for attempt in range(1, OWNER_ATTEMPTS + 1):
            try:
                return self.commit_once(subject, snapshot, key)
            except (OwnerUnavailable, RateLimited, NeverArrived) as down:
                # The command was not taken (the owner unreachable, the agent throttled, or it
                # never reached Reconcile): nothing happened. The same command goes again
                # under the same key (docs/api.md): a new key for it is what an agent must
                # never learn, so after the last attempt it waits for a later run.
                key = down.idempotency_key
                if attempt == OWNER_ATTEMPTS:
                    self.say(f"{subject}: {down.code} after {attempt} attempts under {key}")
                    return "owner_unavailable" if isinstance(down, OwnerUnavailable) else down.code
                pause = min(down.retry_after or self.pause_seconds, LONGEST_PAUSE)
                self.say(f"{subject}: {down.code}; the same command under {key} in {pause:g} s")
                time.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns")

    def commit_once(self, subject: str, snapshot: Snapshot, key: str | None) -> str:
        try:
            effect = self.client.commit(
                snapshot,
                action=self.task.action,
                resulting_value=self.task.value,
                idempotency_key=key,
            )
        except OwnerRefused as problem:
            # The owner refuses the command itself: no retry or new decision changes that.
            self.say(f"{subject}: the owner refuses it ({problem.detail})")
            return "owner_refused"
        except (PreconditionFailed, SnapshotTainted, ContractSuperseded) as problem:
            self.say(f"{subject}: {problem.code}: what the snapshot read no longer holds")
            return "again"
        except EscalationPending as problem:
            self.say(f"{subject}: waiting on escalation {problem.escalation_id}")
            return "escalated"
        except Forbidden as problem:
            self.say(f"{subject}: not allowed ({problem.code})")
            return "forbidden"
        except Locked as problem:
            self.say(f"{subject}: held by people ({problem.code})")
            return "held"
        except (OwnerUnavailable, RateLimited):
            raise  # `commit` sends it again under its key
        except Unavailable as problem:
            # Reconcile itself could not answer (its database, its cache): decide again later.
            self.say(f"{subject}: {problem.code}; trying again later")
            return "again"
        except CommitOutcomeUnknown as lost:
            self.say(f"{subject}: no answer; asking about {lost.idempotency_key}, not re-sending")
            try:
                settled = self.client.wait(lost.idempotency_key)
            except NotFound:
                # Reconcile holds no command under the key: it never arrived (the same key
                # again is safe whatever happened: a second copy is answered, not executed).
                self.say(f"{subject}: nothing under {lost.idempotency_key}: it never arrived")
                raise NeverArrived(lost.idempotency_key) from None
            return self.settle(subject, settled)
        except TransportError as unsent:
            # No attempt got a connection: nothing was sent, and the same key goes again.
            if unsent.idempotency_key is None:
                raise
            self.say(f"{subject}: nothing under {unsent.idempotency_key}: it never arrived")
            raise NeverArrived(unsent.idempotency_key) from None
        self.say(f"{subject}: committed {effect.idempotency_key}: {effect.status}")
        if effect.status == "unknown":
            self.say(f"{subject}: the owner did not answer: asking, never re-sending")
        return self.settle(subject, self.client.wait(effect, timeout=self.wait_seconds))

    def settle(self, subject: str, effect: Effect) -> str:
        """React to where the effect ended."""
        self.say(f"{subject}: effect {effect.status}")
        if effect.status == "verified":
            found = effect.readback() or {}
            evidence = [e.evidence_id for e in effect.timeline if e.kind == "readback"]
            memory = self.client.remember(
                memory_class=self.task.memory_class,
                subject=subject,
                purpose=self.task.purpose,
                field=self.task.field,
                value=found.get("value", self.task.value),
                derived_from=[ref for ref in evidence if ref][-1:] or [effect.snapshot_id],
                supersedes=self.believed.get(subject),
                note=f"{self.task.action} verified by readback ({effect.idempotency_key})",
            )
            self.say(f"{subject}: remembered the outcome ({memory.memory_id})")
            return "verified"
        if effect.status == "not_executed":
            return "again"  # the owner never executed it: a new decision is safe
        if effect.status == "unknown":
            self.say(f"{subject}: still unknown; operators resolve {effect.idempotency_key}")
        return str(effect.status)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("subjects", nargs="+")
    parser.add_argument("--url", default=os.environ.get("RECONCILE_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--key", default=os.environ.get("RECONCILE_API_KEY", ""))
    parser.add_argument("--decision-class", default="warehouse-pick")
    parser.add_argument("--purpose", default="fulfilment")
    parser.add_argument("--action", default="pick_pallet")
    parser.add_argument("--field", default="pallet_bay")
    parser.add_argument("--value", default="picked")
    parser.add_argument("--memory-class", default="episodic")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait per effect")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between rounds")
    args = parser.parse_args(argv)
    if not args.key.strip():
        parser.error("an API key is needed: --key or RECONCILE_API_KEY")
    task = Task(
        decision_class=args.decision_class,
        purpose=args.purpose,
        action=args.action,
        field=args.field,
        value=args.value,
        memory_class=args.memory_class,
    )
    try:
        client = ReconcileClient(args.url, args.key)
    except ValueError as refused:  # a key no HTTP header can carry (never repeated)
        parser.error(f"--key / RECONCILE_API_KEY: {refused}")
    except httpx.InvalidURL as refused:
        parser.error(f"--url / RECONCILE_URL: {refused}")
    try:
        with client:
            agent = Agent(client, task, wait_seconds=args.wait, pause_seconds=args.pause)
            outcomes = agent.run(args.subjects)
    except NotAuthorised:
        print("the server does not accept this key", file=sys.stderr)
        return 2
    except TransportError as problem:
        print(f"no answer from {args.url}: {problem.detail}", file=sys.stderr)
        return 2
    except ReconcileError as problem:
        print(f"stopped: {problem.status} {problem.code}: {problem.detail}", file=sys.stderr)
        return 1
    for subject, outcome in outcomes.items():
        print(f"{subject}: {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
