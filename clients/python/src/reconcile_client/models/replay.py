"""A replay: a snapshot decided again as it was knowable then, or under today's corrections."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from reconcile_client.models._parse import OWN, Json, strs

ReplayMode = Literal["as_recorded", "corrected"]


@dataclass(frozen=True)
class ReplayDifference:
    """One path of the snapshot's content that the replay decided otherwise."""

    path: str
    recorded: Any
    replayed: Any

    @classmethod
    def from_json(cls, data: Json) -> ReplayDifference:
        return cls(path=data["path"], recorded=data.get("recorded"), replayed=data.get("replayed"))


@dataclass(frozen=True)
class Replay:
    """`POST /api/v1/snapshots/{id}/replay`. `exact` says the replay hashed as recorded.

    An inexact replay that names `unavailable_sources` is incomplete (an owner could not give
    its events again), which is not the decision changing: ask again when the owner answers.
    """

    mode: ReplayMode
    exact: bool
    snapshot_id: str
    original_hash: str
    replayed_hash: str
    differences: tuple[ReplayDifference, ...]
    unavailable_sources: tuple[str, ...]
    # Set only for a snapshot from before content schema 5 replayed exactly by reading no
    # further along the evidence chain than the last entry it cites.
    inferred_ledger_seq: int | None = None
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Replay:
        return cls(
            mode=data["mode"],
            exact=bool(data["exact"]),
            snapshot_id=data["snapshot_id"],
            original_hash=data.get("original_hash", ""),
            replayed_hash=data.get("replayed_hash", ""),
            differences=tuple(
                ReplayDifference.from_json(item) for item in data.get("differences", ())
            ),
            unavailable_sources=strs(data.get("unavailable_sources")),
            inferred_ledger_seq=data.get("inferred_ledger_seq"),
            raw=data,
        )

    @property
    def incomplete(self) -> bool:
        """An owner could not give its events again: the replay could not tell."""
        return bool(self.unavailable_sources)
