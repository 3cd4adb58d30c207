"""Plotly figures for lineage. Pure: selector output in, a figure out (no queries, no I/O).

The graph is drawn in columns, left to right in the order things happen, as the host app
registered its kinds (`lineage_app.registry`): each kind has one colour, one marker shape and
one column, so a kind looks the same in the graph, its legend and the counts beside it. A
kind nobody registered is drawn grey, in a column of its own headed "Other".

`figure_json` is the one way a console page embeds a figure (lineage's and the host's).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from html import escape
from typing import Any

import plotly.graph_objects as go
from django.utils.safestring import SafeString, mark_safe

from lineage_app.choices import Relation
from lineage_app.registry import NodeKind, registry
from lineage_app.selectors.graph import ROOT, GraphNode, Subgraph

# Every registered kind by name, as it is drawn (a live view of the registry).
KIND_STYLES: Mapping[str, NodeKind] = registry.kinds
EDGE_COLOUR = "#cfd4da"
ARROW_COLOUR = "#b3bac4"
# Up to this many edges each is an arrow (an annotation); beyond, plain lines draw faster.
MAX_ARROWS = 300
ROOT_RING = "#17202b"
INK = "#17202b"
FAINT = "#6b7280"
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", Arial'

LABEL_LENGTH = 20
# Text beside every marker only while a column stays readable; hover always works.
MAX_LABELLED_PER_LAYER = 24
ROW_HEIGHT = 44
MIN_HEIGHT, MAX_HEIGHT = 360, 1100


def short_label(node: GraphNode) -> str:
    """The few characters that identify a node at a glance; the rest is in the hover."""
    shorten = registry.kind(node.kind).short_label
    ref = shorten(node.ref) if shorten is not None else node.ref
    return ref if len(ref) <= LABEL_LENGTH else f"{ref[: LABEL_LENGTH - 1]}…"


def layered_positions(graph: Subgraph) -> dict[int, tuple[float, float]]:
    """x by layer (empty layers closed up), y spread evenly within the layer.

    Within a layer, nodes are ordered by the mean position of their neighbours in the layers
    already placed (one pass left to right, one back), which removes most crossings without
    a layout library; ties keep a stable order by side, distance and ref.
    """
    kinds = _drawn_kinds(graph)
    layers: dict[int, list[GraphNode]] = defaultdict(list)
    for node in graph.nodes:
        layers[registry.column(kinds[node.pk])].append(node)
    used = sorted(layers)
    neighbours: dict[int, set[int]] = defaultdict(set)
    for edge in graph.edges:
        neighbours[edge.src].add(edge.dst)
        neighbours[edge.dst].add(edge.src)
    rank: dict[int, float] = {}
    for layer in used:
        layers[layer].sort(key=lambda node: (node.side != ROOT, node.distance, node.ref))
    for order in (used, list(reversed(used))):
        for layer in order:
            members = layers[layer]
            initial = {node.pk: index for index, node in enumerate(members)}

            def key(node: GraphNode, initial: dict[int, int] = initial) -> tuple[float, int]:
                placed = [rank[other] for other in neighbours[node.pk] if other in rank]
                if not placed:
                    return (float("inf"), initial[node.pk])
                return (sum(placed) / len(placed), initial[node.pk])

            members.sort(key=key)
            offset = (len(members) - 1) / 2
            for index, node in enumerate(members):
                rank[node.pk] = index - offset
    return {
        node.pk: (float(column), -rank[node.pk])
        for column, layer in enumerate(used)
        for node in layers[layer]
    }


def _drawn_kinds(graph: Subgraph) -> dict[int, str]:
    """The kind each node is drawn as: its own, or a registered variant's (evidence an effect
    generated drawn as a receipt, in reconcile's words)."""
    drawn = {node.pk: node.kind for node in graph.nodes}
    for variant in registry.variants():
        generators = {node.pk for node in graph.nodes if node.kind == variant.generated_by}
        for edge in graph.edges:
            if (
                edge.src in generators
                and edge.relation == Relation.WAS_GENERATED_BY
                and drawn.get(edge.dst) == variant.variant_of
            ):
                drawn[edge.dst] = variant.name
    return drawn


def _hover(node: GraphNode) -> list[str]:
    recorded = node.recorded_at.strftime("%Y-%m-%d %H:%M:%S UTC") if node.recorded_at else "—"
    where = {
        "root": "this node",
        "upstream": "upstream",
        "downstream": "downstream",
        "replacement": "replaced or replacing (wasInvalidatedBy), not derived",
    }[node.side]
    if node.side != ROOT:
        where = f"{where}, {node.distance} hop{'s' if node.distance != 1 else ''}"
    # Plotly renders a few HTML tags in hover text: escape what the data says.
    return [escape(node.kind), escape(node.ref), escape(node.label or "—"), recorded, where]


def lineage_graph_figure(graph: Subgraph, targets: Mapping[str, str]) -> go.Figure:
    """The layered graph. `targets` maps a node id to the console page a click opens."""
    positions = layered_positions(graph)
    kinds = _drawn_kinds(graph)
    by_pk = {node.pk: node for node in graph.nodes}
    arrows = len(graph.edges) <= MAX_ARROWS
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    edge_arrows: list[dict[str, Any]] = []
    for edge in graph.edges:
        if edge.src not in positions or edge.dst not in positions:
            continue
        (x0, y0), (x1, y1) = positions[edge.src], positions[edge.dst]
        if arrows:
            # An arrow says which way provenance flows: a receipt used by a later snapshot
            # points back to the left.
            edge_arrows.append(
                {
                    "x": x1,
                    "y": y1,
                    "ax": x0,
                    "ay": y0,
                    "xref": "x",
                    "yref": "y",
                    "axref": "x",
                    "ayref": "y",
                    "text": "",
                    "showarrow": True,
                    "arrowhead": 2,
                    "arrowsize": 1,
                    "arrowwidth": 1.1,
                    "arrowcolor": ARROW_COLOUR,
                    "standoff": 13 if by_pk[edge.dst].side == ROOT else 8,
                    "startstandoff": 6,
                }
            )
        else:
            edge_x += [x0, x1, None]
            edge_y += [y0, y1, None]
    traces: list[Any] = []
    if edge_x:
        traces.append(
            go.Scatter(
                x=edge_x,
                y=edge_y,
                mode="lines",
                line={"color": EDGE_COLOUR, "width": 1.2},
                hoverinfo="skip",
                showlegend=False,
                name="edges",
            )
        )
    per_layer: dict[float, int] = defaultdict(int)
    for x, _ in positions.values():
        per_layer[x] += 1
    grouped: dict[str, list[GraphNode]] = defaultdict(list)
    for node in graph.nodes:
        grouped[kinds[node.pk]].append(node)
    for kind in sorted(grouped, key=lambda k: (registry.column(k), k)):
        style = registry.kind(kind)
        members = grouped[kind]
        labelled = all(
            per_layer[positions[node.pk][0]] <= MAX_LABELLED_PER_LAYER for node in members
        )
        traces.append(
            go.Scatter(
                x=[positions[node.pk][0] for node in members],
                y=[positions[node.pk][1] for node in members],
                mode="markers+text" if labelled else "markers",
                name=kind,
                text=[escape(short_label(node)) for node in members],
                textposition="bottom center",
                textfont={"size": 10, "color": INK, "family": FONT},
                marker={
                    "symbol": style.symbol,
                    "color": style.colour,
                    "size": [22 if node.side == ROOT else 13 for node in members],
                    "line": {
                        "color": [
                            ROOT_RING if node.side == ROOT else "#ffffff" for node in members
                        ],
                        "width": [3 if node.side == ROOT else 1 for node in members],
                    },
                },
                customdata=[[targets.get(node.node_id, ""), *_hover(node)] for node in members],
                hovertemplate=(
                    "<b>%{customdata[1]}</b> %{customdata[2]}<br>%{customdata[3]}"
                    "<br>recorded %{customdata[4]}<br><i>%{customdata[5]}</i><extra></extra>"
                ),
                showlegend=False,
            )
        )
    annotations = [
        {
            "x": float(column),
            "y": 1.0,
            "xref": "x",
            "yref": "paper",
            "yanchor": "bottom",
            "text": f"<b>{escape(title)}</b>",
            "showarrow": False,
            "font": {"size": 11, "color": FAINT, "family": FONT},
        }
        for column, title in enumerate(_layer_titles(graph, kinds))
    ]
    tallest = max(per_layer.values(), default=1)
    height = max(MIN_HEIGHT, min(MAX_HEIGHT, 90 + ROW_HEIGHT * tallest))
    columns = len(per_layer) or 1
    figure = go.Figure(data=traces)
    figure.update_layout(
        template="none",
        height=height,
        margin={"l": 30, "r": 30, "t": 34, "b": 20},
        paper_bgcolor="#ffffff",
        plot_bgcolor="#ffffff",
        font={"family": FONT, "size": 11, "color": INK},
        hovermode="closest",
        hoverlabel={"bgcolor": "#ffffff", "bordercolor": "#cfd4da", "font": {"color": INK}},
        dragmode="pan",
        showlegend=False,
        xaxis={
            "visible": False,
            "range": [-0.5, columns - 0.5],
            "fixedrange": False,
        },
        yaxis={"visible": False, "range": _y_range(positions), "fixedrange": False},
        annotations=edge_arrows + annotations,
        meta={"root": graph.root.node_id, "drawn": len(by_pk)},
    )
    return figure


def _layer_titles(graph: Subgraph, kinds: dict[int, str]) -> list[str]:
    titles: dict[int, str] = {}
    for node in graph.nodes:
        style = registry.kind(kinds[node.pk])
        titles.setdefault(registry.column(style.name), style.label)
    return [titles[layer] for layer in sorted(titles)]


def _y_range(positions: dict[int, tuple[float, float]]) -> list[float]:
    ys = [y for _, y in positions.values()] or [0.0]
    # Room below the lowest marker for its label.
    return [min(ys) - 0.9, max(ys) + 0.6]


# What `json_script` escapes: the figure sits in a <script type="application/json"> block.
_JSON_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def figure_json(figure: go.Figure) -> SafeString:
    """The figure as JSON for a page's script to draw (lineage.js, charts.js).

    Not `fig.to_html()`: its inline <script> would need the page's CSP nonce, and an htmx
    swap brings a response with a different one. Data in a JSON block is never executed, so
    the only scripts are static files of the same origin.
    """
    return mark_safe(figure.to_json().translate(_JSON_ESCAPES))  # noqa: S308  # nosec B308 B703 - escaped JSON
