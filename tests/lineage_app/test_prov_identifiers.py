"""PROV identifiers (lineage_app/prov_export.py): a node's ref may hold characters an IRI or
PROV-N cannot carry (an agent's Idempotency-Key may be `k"<1>`); the export must still be a
document both formats write, and name each node by the same IRI in both."""

from __future__ import annotations

import warnings

import pytest
from django.utils import timezone
from prov.model import ProvDocument

from lineage_app.choices import Relation
from lineage_app.models import Edge, Node
from lineage_app.prov_export import prov_document

ODD_REFS = ['k"<1>{a}|b^c`d\\e%41 f', "plain-key_1.0", "ünïcode-ключ", "a(b),c=d#e'f"]


@pytest.mark.parametrize("ref", ODD_REFS)
def test_every_ref_exports_as_one_iri_both_formats_can_read(db, ref):
    now = timezone.now()
    effect = Node.objects.create(kind="effect", ref=ref, recorded_at=now)
    receipt = Node.objects.create(kind="evidence", ref="ev-1", recorded_at=now)
    edge = Edge.objects.create(
        src=effect, dst=receipt, relation=Relation.WAS_GENERATED_BY, recorded_at=now
    )
    with warnings.catch_warnings():
        # prov warns when an identifier would be rewritten on the way out (and will refuse
        # such identifiers: prov#524).
        warnings.simplefilter("error")
        document = prov_document([effect, receipt], [edge])
        as_json = document.serialize(format="json")
        as_provn = document.get_provn()
        from_json = ProvDocument.deserialize(content=as_json, format="json")
        from_provn = ProvDocument.deserialize(content=as_provn, format="provn")

    def iris(parsed: ProvDocument) -> set[str]:
        return {str(record.identifier) for record in parsed.get_records() if record.is_element()}

    assert iris(from_json) == iris(from_provn)
    assert len(iris(from_json)) == 2
    # The ref itself is kept verbatim beside the identifier.
    refs = {
        value
        for record in from_provn.get_records()
        for name, value in record.attributes
        if str(name).endswith("ref")
    }
    assert ref in refs


def test_two_refs_never_share_an_identifier(db):
    """An agent chooses its Idempotency-Key: `k:1`, `k_1`, `k@1` and `k_at_1` are four effects,
    and a document that named them by one identifier merged them into one activity."""
    now = timezone.now()
    refs = ["k:1", "k_1", "k@1", "k_at_1", "k/1", "k__1"]
    effects = [Node.objects.create(kind="effect", ref=ref, recorded_at=now) for ref in refs]
    document = prov_document(effects, [])
    parsed = ProvDocument.deserialize(content=document.serialize(format="json"), format="json")
    identifiers = {str(record.identifier) for record in parsed.get_records() if record.is_element()}
    assert len(identifiers) == len(refs)
