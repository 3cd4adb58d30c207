"""What lineage knows of the kinds of node it stores: only what the host app registers.

Lineage stores `kind:ref` nodes and PROV edges and knows no kind. The host app teaches it, the
way apps register with the Django admin, from its `AppConfig.ready()`:

    register_kind("snapshot", label="Snapshots", colour="#1d5fd1", column=3, prov_type="activity",
                  url=snapshot_page, short_label=short_snapshot_id, search_rank=0)
    register_entry_point("memory_class", memory_class_roots, phrase="a memory class")
    configure_explorer(lede=..., start_template=..., blast_radius_url=...)

A kind says how its nodes are drawn (colour, marker, column and the column's heading), what
they are in PROV, where a click on one opens, how a ref is shortened on the graph and how a
bare id typed in the search box ranks. An unregistered kind still shows everywhere: grey, in a
column of its own headed "Other", and a click re-centres the explorer on it.

Registering is idempotent and exclusive: registering the same thing again is a no-op (Django may
run `ready()` more than once), registering something different under a name already taken is
refused with `AlreadyRegistered`, so two apps cannot silently fight over a kind. Hence hosts
pass module-level functions, not lambdas made afresh on each call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

GENERIC_LABEL = "Other"
GENERIC_COLOUR = "#6b7280"
GENERIC_SYMBOL = "circle"
PROV_TYPES = ("entity", "activity", "agent")
# The blast-radius API's own parameters: an entry point cannot take one of these names.
RESERVED_PARAMETERS = frozenset(
    {"source", "from_version", "to_version", "node", "depth", "as_of", "kind", "page", "page_size"}
)

Roots = list[tuple[int, str]]
Registered = TypeVar("Registered", "NodeKind", "EntryPoint")


class AlreadyRegistered(ImproperlyConfigured):
    """A different registration under a name already taken."""


@dataclass(frozen=True)
class NodeKind:
    """How lineage shows and exports the nodes of one kind.

    `label` heads the graph column the kind is drawn in (kinds sharing a column share it).
    `url(ref)` says where a click opens (None: re-centre the explorer); `urls(refs)` does the
    same for many refs at once, for a kind whose page needs a lookup (one query per kind drawn,
    not per node). `short_label(ref)` is the text beside a marker. `search_rank` orders the
    kinds a bare id may mean (lower first; unranked kinds last). `ref_prefixed_by_other_ids`
    marks a kind whose refs begin with another node's ref (`<snapshot id>/<field>`): a
    shortened id matching it and another kind means the other kind.

    A kind with `variant_of` is drawn, never stored: nodes of kind `variant_of` that a node of
    kind `generated_by` generated (wasGeneratedBy) are drawn as this kind, in its own column.
    """

    name: str
    label: str = GENERIC_LABEL
    colour: str = GENERIC_COLOUR
    symbol: str = GENERIC_SYMBOL
    column: int = 0
    prov_type: str = "entity"
    search_rank: int | None = None
    url: Callable[[str], str | None] | None = None
    urls: Callable[[Sequence[str]], Mapping[str, str]] | None = None
    short_label: Callable[[str], str] | None = None
    ref_prefixed_by_other_ids: bool = False
    variant_of: str | None = None
    generated_by: str | None = None


@dataclass(frozen=True)
class EntryPoint:
    """A blast-radius entry point of the host's own (`?<name>=value` on the API): `roots(value)`
    gives the (node row id, `kind:ref`) pairs to start from. `phrase` completes "Everything
    downstream of a source version range or …" in the API's description. `known(value)`, when
    given, says whether the value names anything at all: a value that names nothing is a 404,
    not an empty (and so reassuring) blast radius."""

    name: str
    roots: Callable[[str], Roots]
    phrase: str = ""
    known: Callable[[str], bool] | None = None


@dataclass(frozen=True)
class ExplorerPage:
    """What the explorer page says in the host's words.

    `search_example` is a `kind:ref` offered when a search finds nothing; `start_template`
    (rendered with `start_context(request)`) is the panel shown before a node is asked for;
    `blast_radius_url(node_id)` is the host's page listing everything downstream of a node
    (no such link without it).
    """

    lede: str = "Where a node came from, and everything that depends on it."
    search_placeholder: str = "kind:ref, or a ref alone"
    search_example: str = ""
    start_template: str | None = None
    start_context: Callable[[HttpRequest], dict[str, Any]] | None = None
    blast_radius_url: Callable[[str], str] | None = None


class LineageRegistry:
    """Kinds, entry points and the explorer's words, as registered by the host app."""

    def __init__(self) -> None:
        self._kinds: dict[str, NodeKind] = {}
        self._entry_points: dict[str, EntryPoint] = {}
        self._explorer: ExplorerPage | None = None

    # -- registering --------------------------------------------------------------------------

    def register_kind(
        self,
        name: str,
        *,
        label: str,
        colour: str = GENERIC_COLOUR,
        symbol: str = GENERIC_SYMBOL,
        column: int | None = None,
        prov_type: str = "entity",
        search_rank: int | None = None,
        url: Callable[[str], str | None] | None = None,
        urls: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
        short_label: Callable[[str], str] | None = None,
        ref_prefixed_by_other_ids: bool = False,
        variant_of: str | None = None,
        generated_by: str | None = None,
    ) -> NodeKind:
        """Teach lineage a kind. Without `column`, the kind gets a column of its own after
        every column registered so far."""
        if not name or ":" in name:
            raise ImproperlyConfigured(f"a node kind is a name without ':', not {name!r}")
        if prov_type not in PROV_TYPES:
            raise ImproperlyConfigured(f"prov_type of {name!r} must be one of {PROV_TYPES}")
        if url is not None and urls is not None:
            raise ImproperlyConfigured(f"kind {name!r}: give url or urls, not both")
        if (variant_of is None) != (generated_by is None):
            raise ImproperlyConfigured(f"kind {name!r}: variant_of goes with generated_by")
        if column is None:
            existing = self._kinds.get(name)
            column = existing.column if existing is not None else self._next_column()
        kind = NodeKind(
            name=name,
            label=label,
            colour=colour,
            symbol=symbol,
            column=column,
            prov_type=prov_type,
            search_rank=search_rank,
            url=url,
            urls=urls,
            short_label=short_label,
            ref_prefixed_by_other_ids=ref_prefixed_by_other_ids,
            variant_of=variant_of,
            generated_by=generated_by,
        )
        return _register(self._kinds, name, kind, "node kind")

    def register_entry_point(
        self,
        name: str,
        roots: Callable[[str], Roots],
        *,
        phrase: str = "",
        known: Callable[[str], bool] | None = None,
    ) -> EntryPoint:
        """A blast-radius entry point the API takes as `?<name>=value`."""
        if name in RESERVED_PARAMETERS:
            raise ImproperlyConfigured(f"{name!r} is a blast-radius parameter already")
        return _register(
            self._entry_points,
            name,
            EntryPoint(name, roots, phrase, known),
            "blast-radius entry point",
        )

    def configure_explorer(
        self,
        *,
        lede: str = ExplorerPage.lede,
        search_placeholder: str = ExplorerPage.search_placeholder,
        search_example: str = "",
        start_template: str | None = None,
        start_context: Callable[[HttpRequest], dict[str, Any]] | None = None,
        blast_radius_url: Callable[[str], str] | None = None,
    ) -> ExplorerPage:
        page = ExplorerPage(
            lede=lede,
            search_placeholder=search_placeholder,
            search_example=search_example,
            start_template=start_template,
            start_context=start_context,
            blast_radius_url=blast_radius_url,
        )
        if self._explorer is not None and self._explorer != page:
            raise AlreadyRegistered("the lineage explorer is configured already")
        self._explorer = page
        return page

    # -- reading ------------------------------------------------------------------------------

    @property
    def kinds(self) -> Mapping[str, NodeKind]:
        """Every registered kind by name (a live, read-only view)."""
        return MappingProxyType(self._kinds)

    @property
    def entry_points(self) -> Mapping[str, EntryPoint]:
        """Registered entry points in registration order (a live, read-only view)."""
        return MappingProxyType(self._entry_points)

    @property
    def explorer(self) -> ExplorerPage:
        return self._explorer or ExplorerPage()

    def kind(self, name: str) -> NodeKind:
        """The registered kind, or the generic one: grey, in the column after every other."""
        found = self._kinds.get(name)
        if found is not None:
            return found
        return NodeKind(name=name, column=self._next_column())

    def column(self, name: str) -> int:
        return self.kind(name).column

    def kind_order(self, name: str) -> tuple[int, int, str]:
        """The order things happen in: by column, then in the order kinds were registered;
        unregistered kinds last, by name."""
        names = list(self._kinds)
        if name in self._kinds:
            return (self.column(name), names.index(name), name)
        return (self._next_column(), len(names), name)

    def search_rank(self, name: str) -> tuple[int, int]:
        """Sort key among the kinds a bare id may mean: ranked kinds by rank, then the rest."""
        rank = self.kind(name).search_rank
        return (0, rank) if rank is not None else (1, 0)

    def variants(self) -> list[NodeKind]:
        """Drawn-only kinds (`variant_of`), in registration order."""
        return [kind for kind in self._kinds.values() if kind.variant_of is not None]

    def _next_column(self) -> int:
        return max((kind.column for kind in self._kinds.values()), default=-1) + 1


def _register(table: dict[str, Registered], name: str, item: Registered, what: str) -> Registered:
    existing = table.get(name)
    if existing is not None and existing != item:
        raise AlreadyRegistered(f"the {what} {name!r} is registered already, differently")
    table[name] = item
    return item


# The registry lineage reads. Hosts use the functions below; tests may build their own.
registry = LineageRegistry()
register_kind = registry.register_kind
register_entry_point = registry.register_entry_point
configure_explorer = registry.configure_explorer


def kind_colour(name: str) -> str:
    """The colour a kind is drawn in, for pages that show counts beside a graph."""
    return registry.kind(name).colour


def kind_order(name: str) -> tuple[int, int, str]:
    """Sort key: the order things happen in (see `LineageRegistry.kind_order`)."""
    return registry.kind_order(name)
