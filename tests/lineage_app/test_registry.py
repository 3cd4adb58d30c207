"""The registry: how a host teaches lineage its kinds, and what lineage does with a kind nobody
registered (it still shows: grey, in a column of its own headed "Other", re-centring the
explorer when clicked; an entity in PROV)."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.core.exceptions import ImproperlyConfigured

from lineage_app.choices import Relation
from lineage_app.registry import (
    GENERIC_COLOUR,
    GENERIC_LABEL,
    AlreadyRegistered,
    LineageRegistry,
    registry,
)
from lineage_app.services.graph import Link, graph_record


def snapshot_page(ref: str) -> str:
    return f"/snapshots/{ref}/"


def other_page(ref: str) -> str:
    return f"/elsewhere/{ref}/"


def no_roots(value: str) -> list[tuple[int, str]]:
    return []


# --- Registering ----------------------------------------------------------------------------


def test_registering_the_same_kind_twice_is_a_no_op():
    """Django may run AppConfig.ready() twice: the same registration again changes nothing."""
    kinds = LineageRegistry()
    first = kinds.register_kind("snapshot", label="Snapshots", column=3, url=snapshot_page)
    again = kinds.register_kind("snapshot", label="Snapshots", column=3, url=snapshot_page)
    assert first == again and list(kinds.kinds) == ["snapshot"]


def test_a_kind_without_a_column_keeps_its_column_when_registered_again():
    kinds = LineageRegistry()
    kinds.register_kind("source", label="Sources")
    first = kinds.register_kind("effect", label="Effects")
    assert kinds.register_kind("effect", label="Effects") == first
    assert (kinds.column("source"), kinds.column("effect")) == (0, 1)


def test_registering_a_kind_differently_is_refused():
    kinds = LineageRegistry()
    kinds.register_kind("snapshot", label="Snapshots", url=snapshot_page)
    with pytest.raises(AlreadyRegistered):
        kinds.register_kind("snapshot", label="Snapshots", url=other_page)
    assert kinds.kind("snapshot").url is snapshot_page


def test_entry_points_and_the_explorer_follow_the_same_rule():
    kinds = LineageRegistry()
    kinds.register_entry_point("memory_class", no_roots, phrase="a memory class")
    kinds.register_entry_point("memory_class", no_roots, phrase="a memory class")
    with pytest.raises(AlreadyRegistered):
        kinds.register_entry_point("memory_class", no_roots, phrase="another class")
    kinds.configure_explorer(lede="Where it came from.")
    kinds.configure_explorer(lede="Where it came from.")
    with pytest.raises(AlreadyRegistered):
        kinds.configure_explorer(lede="Something else.")


@pytest.mark.parametrize("name", ["source", "node", "kind", "page", "as_of"])
def test_an_entry_point_cannot_take_a_parameter_the_api_already_has(name):
    with pytest.raises(ImproperlyConfigured):
        LineageRegistry().register_entry_point(name, no_roots)


def test_malformed_kinds_are_refused():
    kinds = LineageRegistry()
    for bad in (
        {"name": "a:b", "label": "x"},
        {"name": "x", "label": "x", "prov_type": "plan"},
        {"name": "x", "label": "x", "url": snapshot_page, "urls": dict},
        {"name": "x", "label": "x", "variant_of": "evidence"},
    ):
        with pytest.raises(ImproperlyConfigured):
            kinds.register_kind(**bad)
    assert not kinds.kinds


# --- An unregistered kind -------------------------------------------------------------------


def test_an_unregistered_kind_is_generic_and_comes_after_every_registered_one():
    kinds = LineageRegistry()
    kinds.register_kind("source", label="Sources", column=0, search_rank=9)
    kinds.register_kind("memory", label="Memories", column=7)
    widget = kinds.kind("widget")
    assert (widget.label, widget.colour, widget.prov_type) == (
        GENERIC_LABEL,
        GENERIC_COLOUR,
        "entity",
    )
    assert widget.url is None and widget.urls is None and widget.column == 8
    assert sorted(["widget", "memory", "source"], key=kinds.kind_order) == [
        "source",
        "memory",
        "widget",
    ]
    # A bare id matching a ranked kind and an unranked one means the ranked one.
    assert kinds.search_rank("source") < kinds.search_rank("widget")


@pytest.fixture
def widget_chain(db):
    """A kind reconcile never registers, upstream of a snapshot."""
    graph_record(
        [
            Link("widget:w-1", "snapshot:snap_w", Relation.USED),
            Link("snapshot:snap_w", "decision:dec_w", Relation.WAS_DERIVED_FROM),
        ],
        labels={"widget:w-1": "a widget"},
    )


def test_an_unregistered_kind_renders_in_the_explorer_with_a_generic_label(
    widget_chain, operator_browser
):
    assert "widget" not in registry.kinds
    response = operator_browser.get("/lineage/?node=widget:w-1&depth=2")
    assert response.status_code == 200
    page = response.content.decode()
    figure = json.loads(
        re.search(
            r'<script type="application/json" id="lineage-figure">(.*?)</script>', page, re.S
        ).group(1)
    )
    widget = next(trace for trace in figure["data"] if trace.get("name") == "widget")
    assert widget["marker"]["color"] == GENERIC_COLOUR
    url, kind, ref = widget["customdata"][0][:3]
    assert (unescape(kind), unescape(ref)) == ("widget", "w-1")
    assert url == "/lineage/?node=widget:w-1"  # no page claims it: it re-centres the explorer
    titles = [note["text"] for note in figure["layout"]["annotations"] if note.get("text")]
    assert titles[-1] == f"<b>{GENERIC_LABEL}</b>"  # its own column, after every registered one
    assert '<tr data-kind="widget">' not in page  # the root's own kind is not counted
    assert f'<span class="kind-dot" style="background: {GENERIC_COLOUR}"></span>' in page


def test_an_unregistered_kind_is_counted_and_exported_as_an_entity(widget_chain, operator):
    body = operator.client.get("/api/v1/lineage/snapshot:snap_w/ancestors").json()
    assert body["counts"] == {"widget": 1}
    document = operator.client.get("/api/v1/lineage/widget:w-1/prov").json()
    assert "rc:widget_w-1" in document["entity"]
