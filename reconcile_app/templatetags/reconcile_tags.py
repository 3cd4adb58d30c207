"""Presentation helpers for the console: badges, values, times and durations.

Badge colours come from `BADGE_COLOURS`, so a value looks the same on every page.
"""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe

from lineage_app.templatetags.lineage_tags import timestamp
from reconcile_app.choices import BADGE_COLOURS
from reconcile_app.limits import BLANK_LETTERS

register = template.Library()

NEUTRAL = "grey"
# Constant markup, nothing from a request: safe to mark.
EMPTY = mark_safe('<span class="muted">—</span>')  # nosec B308


@register.filter
def badge_colour(value: Any) -> str:
    text = str(value)
    return BADGE_COLOURS.get(text, NEUTRAL)


@register.simple_tag
def badge(value: Any, label: Any = None, title: str = "") -> SafeString:
    """A badge coloured by `value`; `label` shows other text in the same colour."""
    if value is None or value == "":
        return EMPTY
    text = str(value if label is None else label).replace("_", " ")
    if title:
        return format_html(
            '<span class="badge badge-{}" title="{}">{}</span>', badge_colour(value), title, text
        )
    return format_html('<span class="badge badge-{}">{}</span>', badge_colour(value), text)


# Characters that draw nothing or reorder what follows them: controls, format characters
# (bidi overrides and isolates, zero-width spaces, the byte-order mark, tag characters), line
# and paragraph separators. U+202E made the value "\u202edloh_latot" read "total_hold" on an
# approval page, and ran on to reverse the rest of the sentence; "ho\u200bld" read "hold".
# The joiners stay: Persian, Indic scripts and emoji sequences need them to be spelt at all.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
_JOINERS = frozenset("\u200c\u200d")


def _hidden(character: str) -> bool:
    return (
        unicodedata.category(character) in _HIDDEN_CATEGORIES and character not in _JOINERS
    ) or character in BLANK_LETTERS


def _has_hidden(text: str) -> bool:
    # Printable ASCII, most values, is settled in C without a call per character.
    return not (text.isascii() and text.isprintable()) and any(map(_hidden, text))


def _shown(text: str) -> str:
    """JSON text with every hidden character written as its `\\u` escape: json.dumps spells
    each one (astral ones as their surrogate pair, as JSON does)."""
    if not _has_hidden(text):
        return text
    return "".join(json.dumps(c)[1:-1] if _hidden(c) else c for c in text)


@register.filter
def jsonvalue(value: Any) -> str:
    """A state or claim value as compact text: strings bare, everything else as JSON.

    A string a reader could not tell from another one (empty, spaces at either end, or a
    hidden character) shows as its JSON literal with the hidden characters escaped, so
    what the page shows is what the policy compared and the owner will be sent. Other
    scripts stay readable: JSON's default `\\u` escaping made a map of Japanese names
    unreadable to the people it was about.
    """
    if value is None:
        return "null"
    if isinstance(value, str):
        if value and value == value.strip() and not _has_hidden(value):
            return value
        return _shown(json.dumps(value, ensure_ascii=False))
    return _shown(json.dumps(value, sort_keys=True, separators=(",", ": "), ensure_ascii=False))


@register.filter
def duration(seconds: float | int | None) -> str:
    """Seconds as `1h 02m`, `4m 05s` or `12.3s`; negative ages (clock skew) keep their sign."""
    if seconds is None:
        return "—"
    sign = "-" if seconds < 0 else ""
    seconds = abs(float(seconds))
    if seconds < 60:
        return f"{sign}{seconds:.1f}s" if seconds < 10 else f"{sign}{seconds:.0f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{sign}{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{sign}{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{sign}{days}d {hours:02d}h"


@register.simple_tag
def ts(value: datetime | None) -> SafeString:
    """A UTC timestamp to the second, with the exact instant in the tooltip (one rendering
    for every page: lineage's, the lower layer's)."""
    return timestamp(value)


@register.filter
def picker_second_after(value: datetime | None) -> str:
    """`value` as the "believed at" picker holds it (UTC, to the second), rounded up: asked
    about that second, what was recorded at `value` is already known."""
    if value is None:
        return ""
    moment = value.astimezone(UTC)
    if moment.microsecond:
        moment = moment.replace(microsecond=0) + timedelta(seconds=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


@register.filter
def short(value: Any, length: int = 12) -> str:
    """A prefix of a hash or id; the full value goes in a title attribute beside it."""
    text = str(value or "")
    return text if len(text) <= length else f"{text[:length]}…"


@register.filter
def humanise(value: Any) -> str:
    return str(value or "").replace("_", " ")


@register.simple_tag
def age(since: datetime | None, until: datetime | None = None) -> SafeString:
    """How long something has waited: from `since` to `until` (or now)."""
    if since is None:
        return EMPTY
    seconds = ((until or timezone.now()) - since).total_seconds()
    exact = timezone.localtime(since, timezone.get_fixed_timezone(0)).isoformat()
    return format_html(
        '<span class="age" title="since {}">{}</span>',
        exact.replace("+00:00", "Z"),
        duration(seconds),
    )


@register.simple_tag
def escalation_subject(escalation: Any) -> SafeString:
    """What an escalation is about, linked: a fact key, an effect, a memory, or a snapshot,
    and the account (subject) it concerns, linked to every escalation about that subject."""
    if escalation.fact_key:
        return format_html(
            '<span class="tag">fact</span> <a class="mono" href="{}">{}</a>',
            reverse("console-fact", args=[escalation.fact_key]),
            escalation.fact_key,
        )
    if escalation.effect_id is not None:
        key = escalation.effect.idempotency_key
        about = format_html(
            '<span class="tag">effect</span> <a class="mono" href="{}">{}</a>',
            reverse("console-effect", args=[key]),
            key,
        )
        return about + _on_subject(escalation.effect.subject)
    if escalation.memory_id is not None:
        memory_id = escalation.memory.memory_id
        about = format_html(
            '<span class="tag">memory</span> <a class="mono" href="{}">{}</a>',
            reverse("console-memory", args=[memory_id]),
            memory_id,
        )
        return about + _on_subject(escalation.memory.subject)
    if escalation.snapshot_id is not None:
        snapshot_id = escalation.snapshot.snapshot_id
        about = format_html(
            '<span class="tag">snapshot</span> <a class="mono" href="{}" title="{}">{}</a>',
            reverse("console-snapshot", args=[snapshot_id]),
            snapshot_id,
            short(snapshot_id, 17),
        )
        return about + _on_subject(escalation.snapshot.subject)
    return EMPTY


def _on_subject(subject: str) -> SafeString:
    """The subject, linked to the queue's every escalation about it (any status)."""
    if not subject:
        return EMPTY
    return format_html(
        ' <span class="muted">on</span> <a class="mono" href="{}?{}" title="{}">{}</a>',
        reverse("console-escalations"),
        urlencode({"status": "all", "subject": subject}),
        f"every escalation about {subject}",
        subject,
    )


@register.simple_tag
def attempts(effect: Any) -> SafeString:
    """Readback and owner-ledger attempts of an effect, zeros left out."""
    parts = [
        (count, label)
        for count, label in (
            (effect.readback_attempts, "readback"),
            (effect.resolution_attempts, "ledger"),
        )
        if count
    ]
    if not parts:
        return EMPTY
    return format_html_join(
        " · ",
        '<span class="nowrap" title="{} {} attempts">{} {}</span>',
        ((count, label, count, label) for count, label in parts),
    )


# What each status means for the person looking at it (effect_tags.effect_story tells one
# effect's, where an operator's word stands in for a receipt).
EFFECT_SAYS: dict[str, str] = {
    "recorded": "Recorded durably; not sent yet.",
    "sent": "Sent to the owner; waiting for its answer.",
    "accepted": "The owner returned a receipt; the readback has not confirmed the change yet.",
    "verified": "Read back from the owner: the change is proven.",
    "rejected": "The owner refused it: nothing changed.",
    "unknown": (
        "Sent, and no answer proved what became of it: it may or may not have happened. "
        "Only the owner's ledger or its current state can tell."
    ),
    "postcondition_failed": (
        "The owner accepted it, but reading the target back did not show the change."
    ),
    "not_executed": "Proven not to have happened.",
}


@register.filter
def lookup(mapping: dict[str, Any] | None, key: str) -> Any:
    """`mapping[key]` in a template, or an empty list when it is absent."""
    return (mapping or {}).get(key, [])


@register.simple_tag
def event_detail(detail: dict[str, Any] | None) -> SafeString:
    """An effect event's detail as `name value` pairs; a receipt shows as its id (all of it
    in the tooltip), so one step stays one line."""
    if not detail:
        return EMPTY
    pairs = []
    for name, value in detail.items():
        if isinstance(value, dict) and "receipt_id" in value:
            shown = format_html(
                '<span class="mono" title="{}">{}</span>', jsonvalue(value), value["receipt_id"]
            )
        else:
            shown = format_html('<span class="mono">{}</span>', jsonvalue(value))
        pairs.append((humanise(name), shown))
    return format_html_join("", '<span class="pair"><span class="muted">{}</span> {}</span>', pairs)
