"""Export a lineage subgraph as a W3C PROV document (PROV-JSON or PROV-N) with `prov`.

What each kind is in PROV (entity, activity or agent) is what the host registered
(`prov_type`); an unregistered kind is an entity. Identifiers live in the host's namespace
(`LINEAGE_PROV_NAMESPACE`).
"""

from __future__ import annotations

from typing import Any

from prov.model import ProvDocument

from lineage_app.choices import Relation
from lineage_app.conf import prov_namespace
from lineage_app.models import Edge, Node
from lineage_app.registry import registry

# What PROV-N writes in a local name as it is, or behind a reversible backslash escape.
PROVN_LOCAL_PUNCTUATION = frozenset("_~.-!$&'()*+,;=?#")


def _local_char(char: str) -> str:
    """The character, or its UTF-8 percent-encoding where neither an IRI nor PROV-N can carry
    it as it is (`"`, `<`, a space, a backslash, `%` itself …). prov would percent-encode it
    only on the PROV-N side (and is to refuse it, prov#524): the two formats would then name
    the node by two IRIs, and the PROV-JSON one would not be an IRI at all."""
    if char in PROVN_LOCAL_PUNCTUATION or (char.isalnum() and (char.isascii() or char.isalpha())):
        return char
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def _qualified(prefix: str, node: Node) -> str:
    """`kind_ref`, the ref percent-encoded where it must be (`/`, `@` and `:` too): one
    identifier per node. Spelling them `__`, `_at_` and `_` named an agent's effects `k:1` and
    `k_1` (or `k@1` and `k_at_1`) by one identifier, which PROV reads as one activity."""
    return f"{prefix}:{node.kind}_{''.join(map(_local_char, node.ref))}"


def prov_document(nodes: list[Node], edges: list[Edge]) -> ProvDocument:
    prefix, uri = prov_namespace()
    document = ProvDocument()
    document.add_namespace(prefix, uri)
    prov_type = {node.pk: registry.kind(node.kind).prov_type for node in nodes}
    elements: dict[int, Any] = {}
    for node in nodes:
        attributes = {f"{prefix}:kind": node.kind, f"{prefix}:ref": node.ref}
        if node.label:
            attributes["prov:label"] = node.label
        identifier = _qualified(prefix, node)
        if prov_type[node.pk] == "activity":
            elements[node.pk] = document.activity(identifier, other_attributes=attributes)
        elif prov_type[node.pk] == "agent":
            elements[node.pk] = document.agent(identifier, other_attributes=attributes)
        else:
            elements[node.pk] = document.entity(identifier, other_attributes=attributes)
    for edge in edges:
        if edge.src_id not in elements or edge.dst_id not in elements:
            continue
        src, dst = elements[edge.src_id], elements[edge.dst_id]
        src_activity = prov_type[edge.src_id] == "activity"
        dst_activity = prov_type[edge.dst_id] == "activity"
        if prov_type[edge.src_id] == "agent":
            document.wasAttributedTo(dst, src)
        elif src_activity and dst_activity:
            document.wasInformedBy(dst, src)
        elif dst_activity:
            document.used(dst, src)
        elif src_activity:
            document.wasGeneratedBy(dst, src)
        elif edge.relation == Relation.WAS_INVALIDATED_BY:
            # PROV invalidates by an activity; the invalidating entity (a correction entry,
            # for reconcile) is named in an attribute, as exports have always named it.
            document.wasInvalidatedBy(
                src, None, other_attributes={f"{prefix}:correction": dst.identifier}
            )
        else:
            document.wasDerivedFrom(dst, src)
    return document
