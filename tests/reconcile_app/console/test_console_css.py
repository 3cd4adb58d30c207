"""The console's colours, computed from console.css itself in both themes (light, dark chosen
by the toggle, dark by the system): badge text against its fill (WCAG 1.4.3, 4.5:1) and the
focus ring against the surfaces it is drawn on (WCAG 1.4.11, 3:1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = Path(__file__).resolve().parents[3] / "static" / "reconcile" / "console.css"
BADGES = ("green", "red", "amber", "purple", "grey", "blue")


def palette(selector: str) -> dict[str, str]:
    """The custom properties a rule block declares (the first block for `selector`)."""
    text = CSS.read_text()
    start = text.index(selector + " {")
    body = text[start : text.index("}", start)]
    return dict(re.findall(r"--([\w-]+):\s*([^;]+);", body))


def themes() -> dict[str, dict[str, str]]:
    light = palette(":root")
    return {
        "light": light,
        "dark (toggle)": {**light, **palette(':root[data-theme="dark"]')},
        "dark (system)": {**light, **palette(':root:not([data-theme="light"])')},
    }


def luminance(colour: str) -> float:
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", colour), f"{colour}: not an opaque colour"
    channels = [int(colour[index : index + 2], 16) / 255 for index in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("theme", list(themes()))
def test_badge_text_reads_against_its_fill(theme):
    colours = themes()[theme]
    for badge in BADGES:
        ratio = contrast(colours[badge].strip(), colours[f"{badge}-bg"].strip())
        assert ratio >= 4.5, (theme, badge, round(ratio, 2))


@pytest.mark.parametrize("theme", list(themes()))
def test_the_focus_ring_stands_out_from_the_page(theme):
    colours = themes()[theme]
    ring = colours["focus-ring"].strip()
    for surface in ("paper", "canvas", "paper-soft", "accent-soft"):
        ratio = contrast(ring, colours[surface].strip())
        assert ratio >= 3, (theme, surface, round(ratio, 2))


def test_the_focus_ring_stands_out_from_the_top_bar():
    ring = palette(".topbar")["focus-ring"].strip()
    for theme, colours in themes().items():
        ratio = contrast(ring, colours["head"].strip())
        assert ratio >= 3, (theme, round(ratio, 2))


def test_a_focused_button_is_ringed_off_its_edge():
    """A filled button (primary, danger) is the ring's own colour: a ring drawn on its edge
    disappears into it."""
    rule = re.search(r"\.btn:focus-visible\s*\{([^}]*)\}", CSS.read_text())
    assert rule is not None
    offset = re.search(r"outline-offset:\s*(\d+)px", rule.group(1))
    assert offset is not None and int(offset.group(1)) >= 2
