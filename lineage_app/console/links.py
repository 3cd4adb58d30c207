"""Where a lineage node opens when clicked: the page its kind registered, else the explorer
re-centred on it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlencode

from django.urls import reverse

from lineage_app.registry import registry


def explorer_url(node_id: str, depth: int | None = None) -> str:
    """The explorer drawing `node_id` (at `depth` hops, else the default)."""
    query = {"node": node_id, **({"depth": depth} if depth else {})}
    return f"{reverse('console-lineage')}?{urlencode(query, safe=':@')}"


def node_targets(nodes: Iterable[tuple[str, str]]) -> dict[str, str]:
    """`kind:ref` → the page a click on that node opens, for (kind, ref) pairs.

    A kind registered with `urls` is looked up once for all its refs (a query, perhaps), one
    with `url` ref by ref; a node no page claims re-centres the explorer.
    """
    refs_by_kind: dict[str, list[str]] = {}
    for kind, ref in nodes:
        refs_by_kind.setdefault(kind, []).append(ref)
    targets: dict[str, str] = {}
    for kind, refs in refs_by_kind.items():
        pages = _pages(kind, refs)
        for ref in refs:
            node_id = f"{kind}:{ref}"
            targets[node_id] = pages.get(ref) or explorer_url(node_id)
    return targets


def _pages(kind: str, refs: list[str]) -> Mapping[str, str]:
    spec = registry.kind(kind)
    if spec.urls is not None:
        return spec.urls(refs)
    if spec.url is not None:
        return {ref: url for ref in refs if (url := spec.url(ref))}
    return {}
