"""Export a lineage subgraph as a W3C PROV document (PROV-JSON or PROV-N) with `prov`."""

from __future__ import annotations

from prov.model import ProvDocument

from lineage_app.models import Edge, Node

NAMESPACE = "https://reconcile.invalid/ns#"
# How each kind of node appears in PROV.
ACTIVITIES = {"snapshot", "effect", "reducer"}
AGENTS = {"source"}


def _qualified(node: Node) -> str:
    safe = node.ref.replace("/", "__").replace("@", "_at_").replace(":", "_")
    return f"rc:{node.kind}_{safe}"


def prov_document(nodes: list[Node], edges: list[Edge]) -> ProvDocument:
    document = ProvDocument()
    document.add_namespace("rc", NAMESPACE)
    elements = {}
    for node in nodes:
        attributes = {"rc:kind": node.kind, "rc:ref": node.ref}
        if node.label:
            attributes["prov:label"] = node.label
        identifier = _qualified(node)
        if node.kind in ACTIVITIES:
            elements[node.pk] = document.activity(identifier, other_attributes=attributes)
        elif node.kind in AGENTS:
            elements[node.pk] = document.agent(identifier, other_attributes=attributes)
        else:
            elements[node.pk] = document.entity(identifier, other_attributes=attributes)
    kinds = {node.pk: node.kind for node in nodes}
    for edge in edges:
        if edge.src_id not in elements or edge.dst_id not in elements:
            continue
        src, dst = elements[edge.src_id], elements[edge.dst_id]
        src_activity = kinds[edge.src_id] in ACTIVITIES
        dst_activity = kinds[edge.dst_id] in ACTIVITIES
        if kinds[edge.src_id] in AGENTS:
            document.wasAttributedTo(dst, src)
        elif src_activity and dst_activity:
            document.wasInformedBy(dst, src)
        elif dst_activity:
            document.used(dst, src)
        elif src_activity:
            document.wasGeneratedBy(dst, src)
        elif edge.relation == "wasInvalidatedBy":
            document.wasInvalidatedBy(src, None, other_attributes={"rc:correction": dst.identifier})
        else:
            document.wasDerivedFrom(dst, src)
    return document
