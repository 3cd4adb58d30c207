"""Plotly figures for the drills page. Pure: a stored run's `results` in, a figure out.

Built on the console's chart conventions (`reconcile_app.charts`: layout, colours, the empty
figure), so a drill's chart reads like the overview's; none queries or does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from drills_app.drift import SEED_REFERENCE
from drills_app.selectors import DRILL_METRICS
from reconcile_app.charts import INK, PROTOCOL, SOFT, TONES, empty_figure, figure_layout

BASELINE = "#d99a2b"
# The second run of a comparison: lighter tones of the same hues.
PROTOCOL_B, BASELINE_B = "#8fb3ee", "#f0cf8e"
RUN_COLOURS = ("#1d5fd1", "#d14343")

PERCENT_AXIS = {"tickformat": ".0%", "range": [0, 1.08], "rangemode": "tozero"}


def _rate(figures: Mapping[str, Any], name: str) -> float:
    rate = figures.get(f"{name}_rate")
    return float(rate) if rate is not None else 0.0


def _of(figures: Mapping[str, Any], name: str) -> str:
    return f"{figures.get(name, 0)}/{figures.get(f'{name}_exposed', 0)}"


# --- Drift benchmark ------------------------------------------------------------------------


def _seed_reference_trace(reference: Mapping[str, float]) -> go.Scatter:
    points = sorted((int(horizon), rate) for horizon, rate in reference.items())
    return go.Scatter(
        x=[horizon for horizon, _ in points],
        y=[rate for _, rate in points],
        mode="markers+text",
        name="Seed 002 (2,000 episodes)",
        marker={"symbol": "diamond-open", "size": 13, "color": INK, "line": {"width": 2}},
        text=[f"seed {rate:.1%} @{horizon}" for horizon, rate in points],
        textposition=["bottom right"] + ["bottom left"] * (len(points) - 1),
        textfont={"size": 11, "color": SOFT},
        hovertemplate="Seed 002: %{y:.1%} stale by %{x} compactions<extra></extra>",
    )


def _horizon_axis(horizons: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"title": {"text": "horizon (compactions)"}, "dtick": 1 if len(horizons) <= 16 else None}


def drift_stale_figure(results: Mapping[str, Any]) -> go.Figure:
    """Stale-checkpoint rate against horizon, with the seed's published points marked."""
    horizons = results.get("horizons") or []
    if not horizons:
        return empty_figure("No horizons in this run")
    figure = go.Figure(layout=figure_layout(300, xaxis=_horizon_axis(horizons), yaxis=PERCENT_AXIS))
    figure.add_trace(
        go.Scatter(
            x=[row["horizon"] for row in horizons],
            y=[row["stale_checkpoint_rate"] for row in horizons],
            mode="lines+markers",
            name="Stale-checkpoint rate",
            line={"color": TONES["red"], "width": 2.5},
            marker={"size": 7},
            hovertemplate="%{y:.1%} of episodes saw a stale checkpoint by %{x} compactions"
            "<extra></extra>",
        )
    )
    reference = (results.get("seed_reference") or SEED_REFERENCE).get("stale_checkpoint_rate")
    if reference:
        figure.add_trace(_seed_reference_trace(reference))
    return figure


def drift_accuracy_figure(results: Mapping[str, Any]) -> go.Figure:
    """Final and average checkpoint accuracy of the narrative; reconstruction, exact."""
    horizons = results.get("horizons") or []
    if not horizons:
        return empty_figure("No horizons in this run")
    figure = go.Figure(layout=figure_layout(300, xaxis=_horizon_axis(horizons), yaxis=PERCENT_AXIS))
    x = [row["horizon"] for row in horizons]
    for key, name, colour, dash in (
        ("reconstruction_exact_rate", "Reconstruction exact", TONES["green"], "solid"),
        ("average_checkpoint_accuracy", "Narrative: checkpoint accuracy", TONES["purple"], "dot"),
        ("final_narrative_accuracy", "Narrative: final accuracy", TONES["amber"], "solid"),
    ):
        figure.add_trace(
            go.Scatter(
                x=x,
                y=[row[key] for row in horizons],
                mode="lines+markers",
                name=name,
                line={"color": colour, "width": 2.5, "dash": dash},
                marker={"size": 6},
                hovertemplate=f"{name}: %{{y:.1%}} at %{{x}} compactions<extra></extra>",
            )
        )
    return figure


def drift_compare_figure(runs: Sequence[tuple[int, Mapping[str, Any]]]) -> go.Figure:
    """Two benchmark runs, as (run id, results), overlaid: stale rate and final accuracy."""
    if not any(results.get("horizons") for _, results in runs):
        return empty_figure("Neither run has results yet")
    all_horizons = [row for _, results in runs for row in results.get("horizons") or []]
    figure = go.Figure(
        layout=figure_layout(320, xaxis=_horizon_axis(all_horizons), yaxis=PERCENT_AXIS)
    )
    for (run_id, results), colour in zip(runs, RUN_COLOURS, strict=False):
        horizons = results.get("horizons") or []
        x = [row["horizon"] for row in horizons]
        label = f"#{run_id}"
        figure.add_trace(
            go.Scatter(
                x=x,
                y=[row["stale_checkpoint_rate"] for row in horizons],
                mode="lines+markers",
                name=f"{label} stale-checkpoint rate",
                line={"color": colour, "width": 2.5},
                hovertemplate=f"{label}: %{{y:.1%}} stale by %{{x}} compactions<extra></extra>",
            )
        )
        figure.add_trace(
            go.Scatter(
                x=x,
                y=[row["final_narrative_accuracy"] for row in horizons],
                mode="lines",
                name=f"{label} final accuracy",
                line={"color": colour, "width": 1.8, "dash": "dash"},
                hovertemplate=f"{label}: final accuracy %{{y:.1%}} at %{{x}}<extra></extra>",
            )
        )
    figure.add_trace(_seed_reference_trace(SEED_REFERENCE["stale_checkpoint_rate"]))
    return figure


# --- Failure-injection drill ----------------------------------------------------------------


def _metric_bars(totals: Mapping[str, Any], name: str, colour: str, offsetgroup: str) -> go.Bar:
    return go.Bar(
        x=[label.replace(" ", "<br>", 1) for _, label in DRILL_METRICS],
        y=[_rate(totals, metric) for metric, _ in DRILL_METRICS],
        name=name,
        marker={"color": colour},
        offsetgroup=offsetgroup,
        text=[_of(totals, metric) for metric, _ in DRILL_METRICS],
        textposition="outside",
        textfont={"size": 11, "color": SOFT},
        cliponaxis=False,
        hovertemplate=f"{name}: failed %{{text}} exposed trials (%{{y:.0%}})<extra></extra>",
    )


def drill_metrics_figure(results: Mapping[str, Any]) -> go.Figure:
    """Protocol against baseline per failure: the rate over exposed trials, count on top."""
    totals = results.get("totals") or {}
    if not totals:
        return empty_figure("No totals in this run")
    figure = go.Figure(
        layout=figure_layout(
            320,
            barmode="group",
            bargap=0.28,
            yaxis={**PERCENT_AXIS, "range": [0, 1.15], "title": {"text": "of exposed trials"}},
        )
    )
    figure.add_trace(_metric_bars(totals.get("protocol", {}), "Protocol", PROTOCOL, "protocol"))
    figure.add_trace(_metric_bars(totals.get("baseline", {}), "Baseline", BASELINE, "baseline"))
    return figure


def drill_compare_figure(runs: Sequence[tuple[int, Mapping[str, Any]]]) -> go.Figure:
    """Two drill runs, as (run id, results): each run's protocol and baseline bars."""
    if not any(results.get("totals") for _, results in runs):
        return empty_figure("Neither run has results yet")
    figure = go.Figure(
        layout=figure_layout(
            340,
            barmode="group",
            bargap=0.22,
            yaxis={**PERCENT_AXIS, "range": [0, 1.15], "title": {"text": "of exposed trials"}},
        )
    )
    shades = ((PROTOCOL, BASELINE), (PROTOCOL_B, BASELINE_B))
    for (run_id, results), (protocol, baseline) in zip(runs, shades, strict=False):
        totals = results.get("totals") or {}
        label = f"#{run_id}"
        figure.add_trace(
            _metric_bars(totals.get("protocol", {}), f"{label} protocol", protocol, f"p{label}")
        )
        figure.add_trace(
            _metric_bars(totals.get("baseline", {}), f"{label} baseline", baseline, f"b{label}")
        )
    return figure
