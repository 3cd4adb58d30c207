"""The lineage benchmark's graph: a lineage-shaped DAG generated in chunks (see the package
docstring for its shape), never held whole in memory."""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import networkx as nx

from lineage_app.choices import Relation

DEFAULT_EDGES = 1_000_000
SEED = 20261129
CHUNK_EDGES = 100_000

KINDS = ("decision", "effect", "evidence", "memory", "read", "reducer", "snapshot", "source")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
FIELDS = (
    ("collections_status", "case-service"),
    ("complaint_status", "complaints-service"),
    ("hardship_status", "hardship-register"),
    ("missed_payments", "payments-ledger"),
    ("balance_band", "payments-ledger"),
    ("contact_preference", "contact-prefs"),
    ("kyc_status", "kyc-registry"),
    ("vulnerability_flag", "case-service"),
)
SOURCES = sorted({source for _, source in FIELDS})
BIG_REDUCER = "hardship@3"
SMALL_REDUCER = "collections@1"
OTHER_REDUCERS = ("hardship@2", "collections@1", "collections@2", "complaints@1")

# Calibrated averages of the step below (per snapshot): edges written, and nodes downstream
# of the snapshot itself (snapshot, decision, effects, receipts/readbacks, memory).
EDGES_PER_STEP = 18.2
DOWNSTREAM_PER_STEP = 4.2
MEAN_HISTORY = 9.0
MAX_HISTORY = 120
PLAN_MARGIN = 1.01  # plan 1% more steps than needed; the stream stops at the exact edge count


@dataclass
class Subject:
    name: str
    reducer: int
    standing: int = 0
    observations: list[int] = field(default_factory=list)
    receipts: list[int] = field(default_factory=list)
    memory: int = 0
    steps: int = 0


@dataclass(frozen=True)
class Root:
    pk: int
    node: str
    role: str


@dataclass
class Generated:
    graph: nx.DiGraph
    first_id: int
    kind_of: array  # kind code per node, indexed by pk - first_id
    big: Root
    small: Root
    nodes: int = 0
    edges: int = 0
    write_s: float = 0.0
    index_s: float = 0.0
    networkx_s: float = 0.0
    total_s: float = 0.0

    def kind(self, pk: int) -> str:
        return KINDS[self.kind_of[pk - self.first_id]]


class LineageGenerator:
    """Streams (node rows, edge rows) in chunks of ~100,000 edges; never holds the whole graph.

    Node ids are assigned here (from `first_id`), so edges need no lookups.
    """

    def __init__(
        self, edges: int, seed: int, first_id: int, timestamp: Callable[[int], str]
    ) -> None:
        self.rng = random.Random(seed)  # noqa: S311 - reproducible data, not secrets
        self.target = edges
        self.next_id = first_id
        self.first_id = first_id
        self.kind_of = array("b")
        self.timestamp = timestamp
        self.versions = max(50, edges // 400)
        self.source_ids: dict[tuple[str, int], int] = {}
        self.nodes: list[tuple] = []
        self.edges: list[tuple] = []
        big_share = edges // 5
        self.small_target = max(20, min(1000, edges // 1000))
        self.reducers: dict[str, int] = {}
        self.now = timestamp(0)
        for name in (BIG_REDUCER, *OTHER_REDUCERS):
            if name not in self.reducers:
                self.reducers[name] = self._node("reducer", name, f"reducer {name}")
        self.subjects, self.order = self._plan(big_share)

    # -- planning -----------------------------------------------------------------------------

    def _plan(self, big_share: int) -> tuple[list[Subject], list[int]]:
        """Subject histories: subject 0 is the small root's; a cohort reaches the big share."""
        rng = self.rng
        histories = [max(2, round(self.small_target / DOWNSTREAM_PER_STEP))]
        subjects = [Subject("account-000000", self.reducers[SMALL_REDUCER])]
        planned_edges = histories[0] * EDGES_PER_STEP
        big_planned = 0.0
        while planned_edges < self.target * PLAN_MARGIN:
            length = min(MAX_HISTORY, 1 + int(rng.expovariate(1 / MEAN_HISTORY)))
            if big_planned < big_share * PLAN_MARGIN:
                reducer = BIG_REDUCER
                big_planned += length * DOWNSTREAM_PER_STEP
            else:
                reducer = rng.choice(OTHER_REDUCERS)
            subjects.append(Subject(f"account-{len(subjects):06d}", self.reducers[reducer]))
            histories.append(length)
            planned_edges += length * EDGES_PER_STEP
        order = [index for index, length in enumerate(histories) for _ in range(length)]
        rng.shuffle(order)
        return subjects, order

    # -- rows ---------------------------------------------------------------------------------

    def _node(self, kind: str, ref: str, label: str) -> int:
        pk = self.next_id
        self.next_id += 1
        self.nodes.append((pk, kind, ref, label, self.now))
        self.kind_of.append(KIND_CODE[kind])
        return pk

    def _edge(self, src: int, dst: int, relation: str) -> None:
        self.edges.append((src, dst, relation, self.now))

    def _hex(self) -> str:
        return f"{self.rng.getrandbits(128):032x}"

    def _source(self, source: str) -> int:
        key = (source, self.rng.randrange(self.versions))
        pk = self.source_ids.get(key)
        if pk is None:
            pk = self._node("source", f"{source}@{key[1]}", f"{source} version {key[1]}")
            self.source_ids[key] = pk
        return pk

    def _step(self, subject: Subject) -> None:
        rng = self.rng
        first = subject.steps == 0
        subject.steps += 1
        if first:
            subject.standing = self._node(
                "evidence", f"ev-{subject.name}-open", f"{subject.name}: HardshipApproved"
            )
            self._edge(
                self._source("hardship-register"), subject.standing, Relation.WAS_DERIVED_FROM
            )
        if first or rng.random() < 0.4:
            observation = self._node(
                "evidence", f"ev_{self._hex()}", f"{subject.name}: observation"
            )
            if rng.random() < 0.5:
                self._edge(
                    self._source(rng.choice(SOURCES)), observation, Relation.WAS_DERIVED_FROM
                )
            subject.observations = [*subject.observations, observation][-2:]

        snapshot_ref = f"snap_{self._hex()}"
        allow = rng.random() < 0.8
        snapshot = self._node(
            "snapshot",
            snapshot_ref,
            f"collections-contact-release {subject.name}: {'allow' if allow else 'deny'}",
        )
        for field_name, source in rng.sample(FIELDS, rng.randint(3, 6)):
            read = self._node("read", f"{snapshot_ref}/{field_name}", f"{field_name} = 'x' (ok)")
            if rng.random() < 0.9:
                self._edge(self._source(source), read, Relation.WAS_ATTRIBUTED_TO)
            self._edge(read, snapshot, Relation.USED)
        for evidence in dict.fromkeys([subject.standing, *subject.observations, *subject.receipts]):
            self._edge(evidence, snapshot, Relation.USED)
        if subject.memory and rng.random() < 0.5:
            self._edge(subject.memory, snapshot, Relation.USED)
        self._edge(subject.reducer, snapshot, Relation.WAS_GENERATED_BY)

        decision = self._node(
            "decision", f"dec_{self._hex()}", "allow release_collections_hold" if allow else "deny"
        )
        self._edge(snapshot, decision, Relation.WAS_DERIVED_FROM)
        effects = rng.choices((0, 1, 2), weights=(20, 65, 15))[0] if allow else 0
        receipts: list[int] = []
        for _ in range(effects):
            effect = self._node("effect", f"idem-{self._hex()}", "release_collections_hold")
            self._edge(decision, effect, Relation.WAS_DERIVED_FROM)
            for what, chance in (("receipt", 1.0), ("readback", 0.5)):
                if rng.random() < chance:
                    evidence = self._node("evidence", f"ev_{self._hex()}", what)
                    self._edge(effect, evidence, Relation.WAS_GENERATED_BY)
                    receipts.append(evidence)
        if receipts:
            subject.receipts = receipts[-2:]

        if rng.random() < 0.3:
            memory = self._node("memory", f"mem_{self._hex()}", "episodic collections_status")
            self._edge(snapshot, memory, Relation.WAS_DERIVED_FROM)
            pool = list(dict.fromkeys([*subject.observations, *subject.receipts]))
            for evidence in rng.sample(pool, min(len(pool), rng.randint(1, 2))):
                self._edge(evidence, memory, Relation.WAS_DERIVED_FROM)
            if subject.memory and rng.random() < 0.7:
                self._edge(subject.memory, memory, Relation.WAS_DERIVED_FROM)
            subject.memory = memory

    def chunks(self, chunk_edges: int = CHUNK_EDGES) -> Iterator[tuple[list[tuple], list[tuple]]]:
        """Chunks of (node rows, edge rows); exactly `target` edges in all."""
        written = 0
        index = 0
        while written < self.target:
            if index < len(self.order):
                self.now = self.timestamp(index)
                self._step(self.subjects[self.order[index]])
                index += 1
            else:
                # Plan exhausted early (rare): late observations derived from source versions.
                self.now = self.timestamp(index)
                late = self._node("evidence", f"ev_{self._hex()}", "late observation")
                self._edge(self._source(self.rng.choice(SOURCES)), late, Relation.WAS_DERIVED_FROM)
            if written + len(self.edges) >= self.target:
                del self.edges[self.target - written :]
            if len(self.edges) >= chunk_edges or written + len(self.edges) >= self.target:
                written += len(self.edges)
                yield self.nodes, self.edges
                self.nodes, self.edges = [], []
        if self.nodes:
            yield self.nodes, []
            self.nodes = []
