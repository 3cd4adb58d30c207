"""Lineage through the API: from evidence to snapshot, decision, effect and memory."""

from __future__ import annotations

import json

import pytest

from tests.reconcile_app.lineage_chain import chain_with_memory, collectible  # noqa: F401


@pytest.fixture
def chain(collectible, agent, eager_tasks, django_capture_on_commit_callbacks):
    """ev-collect → snapshot → decision → effect → receipt/readback, and a memory from it."""
    return chain_with_memory(agent, django_capture_on_commit_callbacks)


def test_descendants_of_evidence_reach_every_kind(chain, operator):
    snapshot, memory = chain
    body = operator.client.get("/api/v1/lineage/evidence:ev-collect/descendants").json()
    assert body["root"] == "evidence:ev-collect"
    assert body["counts"]["snapshot"] == 1
    assert body["counts"]["decision"] == 1
    assert body["counts"]["effect"] == 1
    assert body["counts"]["memory"] == 1
    assert body["counts"]["evidence"] >= 2  # the receipt and the readback
    nodes = {node["node"] for node in body["nodes"]}
    assert f"snapshot:{snapshot['snapshot_id']}" in nodes
    assert f"memory:{memory['memory_id']}" in nodes
    assert "effect:l-1" in nodes


def test_ancestors_of_an_effect_reach_its_source_version(chain, operator):
    body = operator.client.get("/api/v1/lineage/effect:l-1/ancestors").json()
    nodes = {node["node"] for node in body["nodes"]}
    assert "source:case-service@42" in nodes
    assert "evidence:ev-collect" in nodes


def test_kind_filter_and_pagination(chain, operator):
    body = operator.client.get(
        "/api/v1/lineage/evidence:ev-collect/descendants", {"kind": "effect", "page_size": 1}
    ).json()
    assert body["total"] == 1
    assert [node["kind"] for node in body["nodes"]] == ["effect"]


def test_a_page_past_the_end_is_404_as_every_list_answers(chain, operator):
    url = "/api/v1/lineage/evidence:ev-collect/descendants"
    response = operator.client.get(url, {"page": 999})
    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    radius = operator.client.get(
        "/api/v1/lineage/blast-radius", {"node": "evidence:ev-collect", "page": 999}
    )
    assert (radius.status_code, radius.json()["code"]) == (404, "not_found")


def test_depth_bounds_the_walk(chain, operator):
    body = operator.client.get(
        "/api/v1/lineage/evidence:ev-collect/descendants", {"depth": 1}
    ).json()
    assert set(body["counts"]) == {"snapshot"}


def test_unknown_node_is_404(operator, db):
    response = operator.client.get("/api/v1/lineage/evidence:nope/descendants")
    assert (response.status_code, response.json()["code"]) == (404, "node_not_found")


def test_blast_radius_by_source_version_range(chain, operator):
    body = operator.client.get(
        "/api/v1/lineage/blast-radius",
        {"source": "case-service", "from_version": 40, "to_version": 42},
    ).json()
    assert body["roots"] == ["source:case-service@42"]
    assert body["counts"]["effect"] == 1
    empty = operator.client.get(
        "/api/v1/lineage/blast-radius", {"source": "case-service", "from_version": 50}
    ).json()
    assert empty["total"] == 0


@pytest.mark.parametrize(
    "asked",
    [
        {"node": "evidence:ev-colect"},
        {"node": ["evidence:ev-collect", "evidence:ev-colect"]},
        {"source": "case-servce"},
        {"memory_class": "no-such-class"},
    ],
)
def test_blast_radius_of_a_name_nothing_bears_is_404_not_an_empty_answer(chain, operator, asked):
    """A mistyped id answered "nothing downstream" (200, empty): an auditor read it as clear."""
    response = operator.client.get("/api/v1/lineage/blast-radius", asked)
    assert (response.status_code, response.json()["code"]) == (404, "node_not_found")
    assert (
        "colect" in response.json()["detail"]
        or "no-such" in response.json()["detail"]
        or ("servce" in response.json()["detail"])
    )


def test_blast_radius_version_zero_is_a_version_and_a_reversed_range_is_refused(chain, operator):
    below_all = operator.client.get(
        "/api/v1/lineage/blast-radius", {"source": "case-service", "to_version": 0}
    ).json()
    assert below_all["roots"] == [] and below_all["total"] == 0
    reversed_range = operator.client.get(
        "/api/v1/lineage/blast-radius",
        {"source": "case-service", "from_version": 42, "to_version": 1},
    )
    assert (reversed_range.status_code, reversed_range.json()["code"]) == (
        400,
        "invalid_parameter",
    )


def test_blast_radius_of_a_declared_class_with_no_records_is_empty(chain, operator):
    body = operator.client.get("/api/v1/lineage/blast-radius", {"memory_class": "case-notes"})
    assert (body.status_code, body.json()["total"]) == (200, 0)


def test_blast_radius_by_memory_class(chain, operator):
    body = operator.client.get("/api/v1/lineage/blast-radius", {"memory_class": "episodic"}).json()
    assert len(body["roots"]) == 1


@pytest.mark.parametrize("fmt", ["json", "provn"])
def test_prov_export(chain, operator, fmt):
    response = operator.client.get("/api/v1/lineage/effect:l-1/prov", {"format": fmt})
    assert response.status_code == 200
    text = response.content.decode()
    if fmt == "json":
        document = json.loads(text)
        assert "activity" in document and "entity" in document and "agent" in document
        assert any("effect_l-1" in key for key in document["activity"])
    else:
        assert text.startswith("document")
        assert "used(" in text or "wasGeneratedBy(" in text


def test_prov_n_is_reached_by_its_media_type_too(chain, operator):
    """The schema lists `text/provenance-notation` as an answer: asked for by Accept, it is
    given (it was a 406), with or without `format`; a problem stays JSON."""
    prov_n = {"HTTP_ACCEPT": "text/provenance-notation"}
    for params in ({}, {"format": "provn"}):
        response = operator.client.get("/api/v1/lineage/effect:l-1/prov", params, **prov_n)
        assert response.status_code == 200, (params, response.content)
        assert response["Content-Type"] == "text/provenance-notation"
        assert response.content.decode().startswith("document")
    missing = operator.client.get("/api/v1/lineage/effect:nope/prov", **prov_n)
    assert missing.status_code == 404
    assert missing["Content-Type"] == "application/problem+json"
    assert missing.json()["code"] == "node_not_found"
    default = operator.client.get("/api/v1/lineage/effect:l-1/prov")
    assert default["Content-Type"] == "application/json"


def test_a_prov_export_over_its_limit_is_refused_not_cut(chain, operator, monkeypatch):
    """Cut at the limit, a walk's page (ordered by kind) dropped whole kinds from a document
    an auditor reads as the whole lineage; now refused, naming the count, and `depth`
    narrows the export to fit."""
    monkeypatch.setattr("lineage_app.api.views.PROV_NODE_LIMIT", 2)
    url = "/api/v1/lineage/evidence:ev-collect/prov"
    whole = operator.client.get(url, {"format": "json"})
    assert (whole.status_code, whole.json()["code"]) == (400, "export_too_large")
    assert "descendants" in whole.json()["detail"]
    near = operator.client.get(url, {"format": "json", "depth": 1})
    assert near.status_code == 200, near.content
    assert "rc:snapshot_snap" in near.content.decode()  # the walk's first step is in it
    assert "effect_l-1" not in near.content.decode()  # and its third is not
    bad = operator.client.get(url, {"depth": 0})
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_parameter")
