"""One Idempotency-Key per commit intent, kept by the client that made it.

A commit may be stopped after its request reached the server and before its answer reached
the caller: an asyncio task cancelled, an `asyncio.timeout` expiring, a KeyboardInterrupt,
an MCP tool call cancelled by its client. The caller then holds no effect to read the key
from, and committing the same thing again under a new key makes a second effect record for
one intent (refused by the owner's compare-and-set at best, telling the caller "the state
moved" about its own write). So:

- the key is made before anything is sent, and a commit stopped by anything that is not a
  problem answer carries it on that exception (`.idempotency_key`, and a note);
- the client remembers the key of each commit intent (snapshot, action, value written): the
  same commit sent again without a key goes under the same key, and the server answers from
  its record instead of recording a second effect. The If-Match is no part of the intent: the
  gate records an effect only at the version its snapshot read, so a snapshot's action has
  one If-Match that can go through, whether it was given or taken from the snapshot.

An explicit `idempotency_key` always wins, and is remembered for its intent too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from reconcile_client._wire import jsonable
from reconcile_client.errors import CommitOutcomeUnknown, ReconcileError, TransportError
from reconcile_client.models import Snapshot

# Intents remembered per client: the oldest are forgotten first. A commit window is seconds
# to minutes long, so only the most recent intents can still be committed anyway.
MOST_INTENTS = 4096


def new_idempotency_key() -> str:
    """A fresh key in the client's own form (`rc-` and a uuid4): make it before committing
    when you want to hold it whatever happens to the call."""
    return f"rc-{uuid.uuid4()}"


class CommitKeys:
    """The key of each commit intent this client has sent, and whether its last call ended
    without an answer (thread-safe: the sync client may be shared by threads, and the async
    one by tasks)."""

    def __init__(self, most: int = MOST_INTENTS) -> None:
        self._keys: OrderedDict[str, tuple[str, bool]] = OrderedDict()  # key, unanswered
        self._lock = threading.Lock()
        self._most = most

    @contextlib.contextmanager
    def sending(
        self,
        target: Snapshot | str,
        *,
        action: str,
        resulting_value: Any,
        given: str | None,
    ) -> Iterator[tuple[str, bool]]:
        """One commit call: its key (`given` if there is one, else the key this intent was
        sent under before, else a new one; the intent's key from now on) and whether a call
        of this intent under that key has had no answer yet (its request may still be in
        flight: a 409 idempotency_key_in_use is then our own, to wait for). An answer, even
        a refusal, settles the intent; anything else that stops the call (a cancellation, a
        timeout, an interrupt) carries the key on its way out."""
        intent = _intent(target, action, resulting_value)
        with self._lock:
            before_key, unanswered = self._keys.get(intent, (None, False))
            key = given if given is not None else before_key
            if key is None:
                key = new_idempotency_key()
            self._keys[intent] = (key, True)
            self._keys.move_to_end(intent)
            while len(self._keys) > self._most:
                self._keys.popitem(last=False)
        resumed = unanswered and key == before_key
        try:
            yield key, resumed
        except CommitOutcomeUnknown:
            raise  # sent, perhaps, and no answer: the next call of this intent resumes it
        except TransportError:
            # No commit of this call left (no connection was had, or the snapshot could not
            # be read first): it leaves the intent as it found it. Marked unanswered, the
            # commit sent again as told would be reported an outcome unknown.
            self._settle(intent, key, unanswered=resumed)
            raise
        except ReconcileError:
            self._settle(intent, key)
            raise  # a problem answer carries the key already (`_flows.commit`)
        except BaseException as stopped:  # cancelled, timed out, interrupted: maybe sent
            key_noted(stopped, key)
            raise
        self._settle(intent, key)

    def _settle(self, intent: str, key: str, *, unanswered: bool = False) -> None:
        with self._lock:
            if self._keys.get(intent, (None, False))[0] == key:
                self._keys[intent] = (key, unanswered)


def _intent(target: Snapshot | str, action: str, resulting_value: Any) -> str:
    """The intent's digest: a value written may be 64 KiB, and a long-lived client remembers
    MOST_INTENTS of them (a quarter of a gigabyte, were the values kept)."""
    snapshot_id = target if isinstance(target, str) else target.snapshot_id
    value = json.dumps(jsonable(resulting_value), sort_keys=True, default=repr)
    return hashlib.sha256(json.dumps([snapshot_id, action, value]).encode()).hexdigest()


def key_noted(stopped: BaseException, key: str) -> None:
    """Put the commit's key on what stopped it (a cancellation, a timeout, an interrupt), so
    that whoever catches it can ask about the commit: `effect(key)`, or commit the same again
    (this client sends it under the same key)."""
    # An exception type with __slots__ takes no attribute: the note still says it.
    with contextlib.suppress(AttributeError):
        stopped.idempotency_key = key  # type: ignore[attr-defined]
    add_note = getattr(stopped, "add_note", None)  # Python 3.11+
    if callable(add_note):
        add_note(
            f"commit stopped under Idempotency-Key {key}: it may have reached the server; "
            f"ask effect({key!r}), or commit the same again (the client reuses the key)"
        )
