"""A chart's figures as a list of links: the keyboard and screen-reader way to what a bar or
point opens (static/reconcile/charts.js opens them on a pointer's click only).

Read from the figure itself, so the list can never disagree with the drawing: every point
that carries a link (the last item of its `customdata`, see reconcile_app/charts.py) and a
value becomes one row; gaps (None) and zero-height bars are left out, as they draw nothing.
"""

from __future__ import annotations

from typing import TypedDict

import plotly.graph_objects as go


class ChartRow(TypedDict):
    label: str
    series: str
    value: str
    link: str


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _axis_unit(figure: go.Figure, axis: str) -> str:
    title = figure.layout[axis].title.text
    return str(title) if title else ""


def chart_rows(figure: go.Figure) -> list[ChartRow]:
    """One row per linked, non-empty point: its category, series, value (with unit) and link."""
    rows: list[ChartRow] = []
    traces = list(figure.data)
    for trace in traces:
        horizontal = getattr(trace, "orientation", None) == "h"
        labels, values = (trace.y, trace.x) if horizontal else (trace.x, trace.y)
        unit = _axis_unit(figure, "xaxis" if horizontal else "yaxis")
        for label, value, data in zip(
            labels or (), values or (), trace.customdata or (), strict=False
        ):
            link = data[-1] if len(data) else ""
            if not link or value is None or value == 0:
                continue
            rows.append(
                {
                    "label": str(label),
                    "series": str(trace.name or "") if len(traces) > 1 else "",
                    "value": f"{_number(value)} {unit}".strip(),
                    "link": str(link),
                }
            )
    return rows


def rows_of(figures: dict[str, go.Figure]) -> dict[str, list[ChartRow]]:
    """`chart_rows` of each named figure."""
    return {name: chart_rows(figure) for name, figure in figures.items()}
