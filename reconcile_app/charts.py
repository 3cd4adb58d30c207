"""Plotly figures for the drills and overview pages. Pure: plain data in, a figure out.

Each function takes what a selector returned (a stored run's `results`, or a part of
`operational_metrics()`) and builds a figure; none queries or does I/O, so each is tested on
plain dicts. Colours follow the console's badges (`BADGE_COLOURS`): a verdict or a result has
the same colour in a chart as in a table. An empty series gives a figure that says so, never
bare axes. `figure_json` (defined once, in lineage_app.charts) embeds a figure as data for
static/reconcile/charts.js to draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import plotly.graph_objects as go

# Re-exported for the drills and overview pages: one definition, in the lower layer.
from lineage_app.charts import figure_json as figure_json
from reconcile_app.choices import BADGE_COLOURS
from reconcile_app.drills.drift import SEED_REFERENCE
from reconcile_app.selectors.console_drills import DRILL_METRICS

FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", Arial'
INK, SOFT, FAINT = "#17202b", "#4b5563", "#6b7280"
GRID, AXIS = "#eef0f3", "#cfd4da"
# Mid tones of the badge inks (console.css): dark enough for text, light enough to fill.
TONES = {
    "green": "#2f9e5b",
    "red": "#d14343",
    "amber": "#d99a2b",
    "purple": "#8657d6",
    "grey": "#9aa3ae",
    "blue": "#3b78d8",
}
# Stacked series whose values share a badge colour (superseded and stale_state are both amber,
# deny and refuse both red) need telling apart: a lighter shade of the same hue.
SHADES = {
    "stale_state": "#f0c674",
    "refuse": "#e98a8a",
    "out_of_scope": "#c8cdd4",
    "historical_only": "#c8cdd4",
}
PROTOCOL, BASELINE = "#1d5fd1", "#d99a2b"
# The second run of a comparison: lighter tones of the same hues.
PROTOCOL_B, BASELINE_B = "#8fb3ee", "#f0cf8e"
RUN_COLOURS = ("#1d5fd1", "#d14343")

PERCENT_AXIS = {"tickformat": ".0%", "range": [0, 1.08], "rangemode": "tozero"}


def tone(value: str) -> str:
    """The chart colour of a badge value (verdict, result, status): its badge's hue."""
    if value in SHADES:
        return SHADES[value]
    return TONES.get(BADGE_COLOURS.get(value, "grey"), TONES["grey"])


def _layout(height: int, **extra: Any) -> dict[str, Any]:
    axis = {
        "gridcolor": GRID,
        "linecolor": AXIS,
        "zeroline": False,
        "tickfont": {"color": SOFT},
        "automargin": True,
    }
    layout: dict[str, Any] = {
        "height": height,
        "margin": {"l": 8, "r": 12, "t": 10, "b": 8},
        "font": {"family": FONT, "size": 12, "color": INK},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "showlegend": True,
        "legend": {
            "orientation": "h",
            "x": 0,
            "y": 1.0,
            "yanchor": "bottom",
            "font": {"size": 11, "color": SOFT},
        },
        "hoverlabel": {"font": {"family": FONT}},
        "xaxis": dict(axis),
        "yaxis": dict(axis),
    }
    for key, value in extra.items():
        if key in ("xaxis", "yaxis"):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    return layout


def _empty(message: str, height: int = 220) -> go.Figure:
    hidden = {"visible": False}
    return go.Figure(
        layout=_layout(
            height,
            showlegend=False,
            xaxis=hidden,
            yaxis=hidden,
            annotations=[
                {
                    "text": message,
                    "showarrow": False,
                    "xref": "paper",
                    "yref": "paper",
                    "x": 0.5,
                    "y": 0.5,
                    "font": {"size": 13, "color": FAINT},
                }
            ],
        )
    )


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
        return _empty("No horizons in this run")
    figure = go.Figure(layout=_layout(300, xaxis=_horizon_axis(horizons), yaxis=PERCENT_AXIS))
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
        return _empty("No horizons in this run")
    figure = go.Figure(layout=_layout(300, xaxis=_horizon_axis(horizons), yaxis=PERCENT_AXIS))
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
        return _empty("Neither run has results yet")
    all_horizons = [row for _, results in runs for row in results.get("horizons") or []]
    figure = go.Figure(layout=_layout(320, xaxis=_horizon_axis(all_horizons), yaxis=PERCENT_AXIS))
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
        return _empty("No totals in this run")
    figure = go.Figure(
        layout=_layout(
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
        return _empty("Neither run has results yet")
    figure = go.Figure(
        layout=_layout(
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


# --- Overview: live operational figures -----------------------------------------------------


def _duration_unit(seconds: Sequence[float]) -> tuple[float, str]:
    longest = max(seconds, default=0.0)
    if longest >= 2 * 86400:
        return 86400.0, "days"
    if longest >= 2 * 3600:
        return 3600.0, "hours"
    if longest >= 120:
        return 60.0, "minutes"
    if longest >= 1:
        return 1.0, "seconds"
    return 0.001, "ms"


def _horizontal_bars(
    labels: Sequence[str], values: Sequence[float], colours: Sequence[str] | str, **bar: Any
) -> go.Bar:
    return go.Bar(
        y=list(labels),
        x=list(values),
        orientation="h",
        marker={"color": colours},
        textposition="outside",
        cliponaxis=False,
        textfont={"size": 11, "color": SOFT},
        **bar,
    )


def _bars_height(count: int) -> int:
    return max(120, min(440, 70 + 28 * count))


def _room_for_labels(values: Sequence[float]) -> list[float]:
    """An axis range with room for the numbers printed beyond the longest bar."""
    return [0, max(values, default=0) * 1.18 or 1]


def unknown_ages_figure(unknown_outcomes: Mapping[str, Any]) -> go.Figure:
    """How long each of the oldest open unknown outcomes has waited, longest on top."""
    items = [item for item in unknown_outcomes.get("oldest") or [] if item["age_seconds"]]
    if not items:
        return _empty("No unknown outcome is open")
    scale, unit = _duration_unit([item["age_seconds"] for item in items])
    items = list(reversed(items))  # Plotly draws the first category at the bottom
    return go.Figure(
        data=[
            _horizontal_bars(
                [item["idempotency_key"] for item in items],
                [item["age_seconds"] / scale for item in items],
                TONES["amber"],
                name="Waiting",
                text=[f"{item['age_seconds'] / scale:.1f}" for item in items],
                customdata=[[item["subject"], item["resolution_attempts"] or 0] for item in items],
                hovertemplate="%{y} (%{customdata[0]}): waiting %{x:.1f} "
                + unit
                + ", %{customdata[1]} resolution attempts<extra></extra>",
            )
        ],
        layout=_layout(
            _bars_height(len(items)),
            showlegend=False,
            bargap=0.3,
            xaxis={
                "title": {"text": f"waiting ({unit})"},
                "range": _room_for_labels([item["age_seconds"] / scale for item in items]),
            },
            yaxis={"tickfont": {"family": "monospace", "size": 11, "color": SOFT}},
        ),
    )


def resolution_figure(resolution: Mapping[str, Any]) -> go.Figure:
    """Unknown outcome → settled: p50 and p95 over the outcomes settled in the window."""
    if not resolution.get("resolved") or resolution.get("p50") is None:
        return _empty("No unknown outcome was settled in the window")
    values = [float(resolution["p50"]), float(resolution["p95"])]
    scale, unit = _duration_unit(values)
    return go.Figure(
        data=[
            go.Bar(
                x=["p50", "p95"],
                y=[value / scale for value in values],
                marker={"color": [TONES["blue"], PROTOCOL]},
                text=[f"{value / scale:.1f} {unit}" for value in values],
                textposition="outside",
                cliponaxis=False,
                textfont={"size": 11, "color": SOFT},
                hovertemplate="%{x}: %{y:.2f} " + unit + "<extra></extra>",
                name="Resolution time",
            )
        ],
        layout=_layout(
            200,
            showlegend=False,
            bargap=0.45,
            yaxis={"title": {"text": unit}, "rangemode": "tozero"},
        ),
    )


def refusals_figure(refusals: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Reason codes of the decisions that did not allow, stacked by result."""
    if not refusals:
        return _empty("Every decision in the window allowed")
    codes: list[str] = []
    for row in refusals:  # ordered by count, most first
        if row["code"] not in codes:
            codes.append(row["code"])
    codes.reverse()  # most frequent on top
    results = sorted({row["result"] for row in refusals})
    most = max(sum(row["count"] for row in refusals if row["code"] == code) for code in codes)
    figure = go.Figure(
        layout=_layout(
            _bars_height(len(codes)),
            barmode="stack",
            xaxis={
                "title": {"text": "decisions"},
                "rangemode": "tozero",
                "dtick": 1 if most <= 8 else None,
            },
            yaxis={"tickfont": {"family": "monospace", "size": 11, "color": SOFT}},
        )
    )
    for result in results:
        counts = {row["code"]: row["count"] for row in refusals if row["result"] == result}
        figure.add_trace(
            go.Bar(
                y=codes,
                x=[counts.get(code, 0) for code in codes],
                orientation="h",
                name=result,
                marker={"color": tone(result)},
                hovertemplate=f"{result} · %{{y}}: %{{x}}<extra></extra>",
            )
        )
    return figure


def _hours(hourly: Sequence[Mapping[str, Any]]) -> list[str]:
    return [row["hour"] for row in hourly]


def _time_axis(hourly: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The whole window, half an hour of margin each side, whatever hours have data."""
    axis: dict[str, Any] = {
        "type": "date",
        "tickformat": "%H:%M",
        "hoverformat": "%Y-%m-%d %H:%M UTC",
    }
    if hourly:
        half = timedelta(minutes=30)
        first = datetime.fromisoformat(hourly[0]["hour"]) - half
        last = datetime.fromisoformat(hourly[-1]["hour"]) + half
        # Plotly draws dates as given, without zones: the series' hours are UTC, so is this.
        axis["range"] = [moment.strftime("%Y-%m-%d %H:%M:%S") for moment in (first, last)]
    return axis


def verdict_mix_figure(hourly: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Claim verdicts per hour, stacked, each in its badge colour."""
    verdicts = sorted({verdict for row in hourly for verdict in row.get("verdicts", {})})
    if not verdicts:
        return _empty("No claims were judged in the window")
    figure = go.Figure(
        layout=_layout(
            260,
            barmode="stack",
            bargap=0.15,
            xaxis=_time_axis(hourly),
            yaxis={"title": {"text": "claims"}, "rangemode": "tozero"},
        )
    )
    hours = _hours(hourly)
    for verdict in verdicts:
        figure.add_trace(
            go.Bar(
                x=hours,
                y=[row.get("verdicts", {}).get(verdict, 0) for row in hourly],
                name=verdict.replace("_", " "),
                marker={"color": tone(verdict)},
                hovertemplate=f"{verdict.replace('_', ' ')}: %{{y}}<extra></extra>",
            )
        )
    return figure


def latency_figure(hourly: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Reconcile latency per hour, p50 and p95 (hours without decisions are gaps)."""
    if not any(row.get("latency_ms") for row in hourly):
        return _empty("No reconcile was measured in the window")
    figure = go.Figure(
        layout=_layout(
            260,
            xaxis=_time_axis(hourly),
            yaxis={"title": {"text": "milliseconds"}, "rangemode": "tozero"},
        )
    )
    hours = _hours(hourly)
    for key, name, colour, dash in (
        ("p50", "p50", TONES["blue"], "solid"),
        ("p95", "p95", PROTOCOL, "dot"),
    ):
        figure.add_trace(
            go.Scatter(
                x=hours,
                y=[(row.get("latency_ms") or {}).get(key) for row in hourly],
                mode="lines+markers",
                connectgaps=False,
                name=name,
                line={"color": colour, "width": 2.2, "dash": dash},
                marker={"size": 6},
                hovertemplate=f"{name}: %{{y:.1f}} ms<extra></extra>",
            )
        )
    return figure


def counts_figure(counts: Mapping[str, int], *, colour: str, empty: str) -> go.Figure:
    """Open items by one key (an escalation's code, a contradiction's kind, a scope)."""
    rows = sorted(((key, count) for key, count in counts.items() if count), key=lambda r: r[1])
    if not rows:
        return _empty(empty, height=160)
    return go.Figure(
        data=[
            _horizontal_bars(
                [key.replace("_", " ") for key, _ in rows],
                [count for _, count in rows],
                TONES.get(colour, colour),
                name="Open",
                text=[str(count) for _, count in rows],
                hovertemplate="%{y}: %{x}<extra></extra>",
            )
        ],
        layout=_layout(
            _bars_height(len(rows)),
            showlegend=False,
            bargap=0.3,
            xaxis={
                "range": _room_for_labels([count for _, count in rows]),
                "dtick": 1 if rows[-1][1] <= 8 else None,
            },
        ),
    )
