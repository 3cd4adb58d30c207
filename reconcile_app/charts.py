"""Plotly figures for the overview page. Pure: plain data in, a figure out.

Each function takes what a selector returned (a part of `operational_metrics()`) and builds a
figure; none queries or does I/O, so each is tested on plain dicts. Colours follow the
console's badges (`BADGE_COLOURS`): a verdict or a result has the same colour in a chart as in
a table. An empty series gives a figure that says so, never bare axes (`empty_figure`).
`figure_json` (defined once, in lineage_app.charts, the lower layer) embeds a figure as data
for static/reconcile/charts.js to draw. `figure_layout`
and the colours are the console's chart conventions: the drills' figures use them too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import plotly.graph_objects as go

# Re-exported for the overview and the drills' pages: one definition, in the lower layer.
from lineage_app.charts import figure_json as figure_json
from reconcile_app.choices import BADGE_COLOURS

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
# The protocol's blue (the drills chart it against the baseline's amber).
PROTOCOL = "#1d5fd1"

# Where a bar or point leads: the console URL of the list it counts. A figure carries it as
# the last item of each point's `customdata`; static/reconcile/charts.js opens it on click.
Link = Callable[..., str]


def tone(value: str) -> str:
    """The chart colour of a badge value (verdict, result, status): its badge's hue."""
    if value in SHADES:
        return SHADES[value]
    return TONES.get(BADGE_COLOURS.get(value, "grey"), TONES["grey"])


def figure_layout(height: int, **extra: Any) -> dict[str, Any]:
    """The console's chart layout at `height` px; `extra` overrides it (axes are merged)."""
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


def empty_figure(message: str, height: int = 220) -> go.Figure:
    """A figure with no data that says why, instead of bare axes."""
    hidden = {"visible": False}
    return go.Figure(
        layout=figure_layout(
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


def unknown_ages_figure(
    unknown_outcomes: Mapping[str, Any], *, link: Link | None = None
) -> go.Figure:
    """How long each of the oldest open unknown outcomes has waited, longest on top.

    `link(key)` is the page of the effect a bar stands for."""
    items = [item for item in unknown_outcomes.get("oldest") or [] if item["age_seconds"]]
    if not items:
        return empty_figure("No unknown outcome is open")
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
                customdata=[
                    [
                        item["subject"],
                        item["resolution_attempts"] or 0,
                        link(item["idempotency_key"]) if link else "",
                    ]
                    for item in items
                ],
                hovertemplate="%{y} (%{customdata[0]}): waiting %{x:.1f} "
                + unit
                + ", %{customdata[1]} resolution attempts<extra></extra>",
            )
        ],
        layout=figure_layout(
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


def resolution_figure(resolution: Mapping[str, Any], *, link: Link | None = None) -> go.Figure:
    """Unknown outcome → settled: p50 and p95 over the outcomes settled in the window.

    `link()` is the list of the settled effects both bars summarise."""
    if not resolution.get("resolved") or resolution.get("p50") is None:
        return empty_figure("No unknown outcome was settled in the window")
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
                customdata=[[link() if link else ""]] * 2,
                name="Resolution time",
            )
        ],
        layout=figure_layout(
            200,
            showlegend=False,
            bargap=0.45,
            yaxis={"title": {"text": unit}, "rangemode": "tozero"},
        ),
    )


def refusals_figure(
    refusals: Sequence[Mapping[str, Any]], *, link: Link | None = None
) -> go.Figure:
    """Reason codes of the decisions that did not allow, stacked by result.

    `link(result, code)` is the list of the snapshots a segment counts."""
    if not refusals:
        return empty_figure("Every decision in the window allowed")
    codes: list[str] = []
    for row in refusals:  # ordered by count, most first
        if row["code"] not in codes:
            codes.append(row["code"])
    codes.reverse()  # most frequent on top
    results = sorted({row["result"] for row in refusals})
    most = max(sum(row["count"] for row in refusals if row["code"] == code) for code in codes)
    figure = go.Figure(
        layout=figure_layout(
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
                customdata=[[link(result, code) if link else ""] for code in codes],
            )
        )
    return figure


def _hours(hourly: Sequence[Mapping[str, Any]]) -> list[str]:
    return [row["hour"] for row in hourly]


def _time_axis(hourly: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The whole window, half an hour of margin each side, whatever hours have data."""
    axis: dict[str, Any] = {
        "type": "date",
        # A day or less reads as hours; a week needs the day.
        "tickformat": "%H:%M" if len(hourly) <= 25 else "%d %b",
        "hoverformat": "%Y-%m-%d %H:%M UTC",
    }
    if hourly:
        half = timedelta(minutes=30)
        first = datetime.fromisoformat(hourly[0]["hour"]) - half
        last = datetime.fromisoformat(hourly[-1]["hour"]) + half
        # Plotly draws dates as given, without zones: the series' hours are UTC, so is this.
        axis["range"] = [moment.strftime("%Y-%m-%d %H:%M:%S") for moment in (first, last)]
    return axis


def verdict_mix_figure(
    hourly: Sequence[Mapping[str, Any]], *, link: Link | None = None
) -> go.Figure:
    """Claim verdicts per hour, stacked, each in its badge colour.

    `link(hour, verdict)` is the list of that hour's snapshots with such a verdict."""
    verdicts = sorted({verdict for row in hourly for verdict in row.get("verdicts", {})})
    if not verdicts:
        return empty_figure("No claims were judged in the window")
    figure = go.Figure(
        layout=figure_layout(
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
                customdata=[[link(hour, verdict) if link else ""] for hour in hours],
            )
        )
    return figure


def latency_figure(hourly: Sequence[Mapping[str, Any]], *, link: Link | None = None) -> go.Figure:
    """Reconcile request time per hour, p50 and p95 (hours without decisions are gaps).

    `link(hour)` is the list of the snapshots decided in that hour."""
    if not any(row.get("latency_ms") for row in hourly):
        return empty_figure("No reconcile request was timed in the window")
    figure = go.Figure(
        layout=figure_layout(
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
                customdata=[[link(hour) if link else ""] for hour in hours],
            )
        )
    return figure


def counts_figure(
    counts: Mapping[str, int], *, colour: str, empty: str, link: Link | None = None
) -> go.Figure:
    """Open items by one key (an escalation's code, a contradiction's kind, a scope).

    `link(key)` is the list of the open items with that key."""
    rows = sorted(((key, count) for key, count in counts.items() if count), key=lambda r: r[1])
    if not rows:
        return empty_figure(empty, height=160)
    return go.Figure(
        data=[
            _horizontal_bars(
                [key.replace("_", " ") for key, _ in rows],
                [count for _, count in rows],
                TONES.get(colour, colour),
                name="Open",
                text=[str(count) for _, count in rows],
                hovertemplate="%{y}: %{x}<extra></extra>",
                customdata=[[link(key) if link else ""] for key, _ in rows],
            )
        ],
        layout=figure_layout(
            _bars_height(len(rows)),
            showlegend=False,
            bargap=0.3,
            xaxis={
                "range": _room_for_labels([count for _, count in rows]),
                "dtick": 1 if rows[-1][1] <= 8 else None,
            },
        ),
    )
