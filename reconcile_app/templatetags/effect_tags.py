"""How one effect's page tells its story: what its status means *for this effect* (an
operator's word is not a receipt), which values are assumed, why a check is stuck, and its
timeline in the operators' words (no task names), with evidence linked.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from reconcile_app.services.effects.state import never_reached_owner
from reconcile_app.templatetags.reconcile_tags import EFFECT_SAYS, EMPTY, event_detail

register = template.Library()

# The timeline's steps as an operator reads them; the stored kind stays in the row's class.
EVENT_LABELS: dict[str, str] = {
    "recorded": "Recorded",
    "sent": "Sent to the owner",
    "receipt": "Receipt from the owner",
    "rejected": "Refused by the owner",
    "timeout": "No answer (outcome unknown)",
    "retried": "Sent again (never reached the owner before)",
    "resolution_attempt": "Asked the owner's ledger (not settled)",
    "resolution": "Settled from the owner's ledger",
    "manual_resolution": "Settled by an operator",
    "check_requested": "Check requested by an operator",
    "readback": "Read back from the owner",
    "compensated": "Compensated by an operator",
}
# Old timelines recorded the Celery task behind a requested check; say what it does instead.
TASK_LABELS: dict[str, str] = {
    "reconcile_app.tasks.effect_readback_task": "readback",
    "reconcile_app.tasks.effect_resolve_task": "resolution",
}
MANUAL_ACCEPTED = (
    "Accepted on an operator's word, awaiting readback: the owner returned no receipt, so "
    "nothing but a read of the target can confirm the change."
)
MANUAL_NOT_EXECUTED = "Not executed, on an operator's word (see the reason in Outcome)."
NEVER_DELIVERED_SAYS = (
    "Never reached the owner: nothing changed. The same Idempotency-Key sends it again, "
    "through the gate."
)


def by_operator(effect: Any) -> bool:
    """Settled by a person's word rather than by the owner's receipt or ledger."""
    outcome = effect.outcome or {}
    return bool(outcome.get("reason")) and outcome.get("resolution") in (
        "succeeded",
        "not_executed",
    )


@register.simple_tag
def effect_story(effect: Any) -> str:
    """One sentence on what this effect's status means, never claiming a receipt it lacks."""
    if effect.status == "accepted" and not effect.receipt and by_operator(effect):
        return MANUAL_ACCEPTED
    if effect.status == "not_executed" and by_operator(effect):
        return MANUAL_NOT_EXECUTED
    # A rejection whose command never reached the owner is not its refusal.
    if never_reached_owner(effect):
        return NEVER_DELIVERED_SAYS
    return EFFECT_SAYS.get(effect.status, "")


@register.filter
def version_assumed(effect: Any) -> bool:
    """The result version came from no receipt: it is If-Match + 1, the least the command
    could have produced (services/effects/resolution.effect_resolve_manually)."""
    return effect.resulting_version is not None and not effect.receipt


# An unknown outcome's step, by what the owner did: "no answer" is untrue of an owner that
# answered a 502, a 409 or someone else's receipt, and the operator triaging it asks it.
UNKNOWN_STEP_LABELS: dict[str, str] = {
    "receipt_mismatch": "Answered without a receipt for it (outcome unknown)",
    "refusal_unproven": "Refused without proof nothing ran (outcome unknown)",
    "sender_lost": "Sender lost mid-request (outcome unknown)",
}
ANSWERED_UNKNOWN = "Answered with an error (outcome unknown)"
# A rejection the owner never saw: "Refused by the owner" would blame it for a request that
# never reached it (both are sent again under their key, through the gate).
REJECTED_STEP_LABELS: dict[str, str] = {
    "owner_unavailable": "Not delivered: the owner could not be reached",
    "not_sent": "Never sent: the request ended before the command left",
}


@register.filter
def event_label(kind: str, detail: dict[str, Any] | None = None) -> str:
    """A timeline step as an operator reads it; `detail` tells an unknown outcome's kinds
    apart (the stored kind of each is `timeout`)."""
    if kind == "timeout" and isinstance(detail, dict):
        code = detail.get("code")
        if code in UNKNOWN_STEP_LABELS:
            return UNKNOWN_STEP_LABELS[code]
        if str(detail.get("detail", "")).startswith("owner answered"):
            return ANSWERED_UNKNOWN
    if kind == "rejected" and isinstance(detail, dict):
        code = detail.get("code")
        if code in REJECTED_STEP_LABELS:
            return REJECTED_STEP_LABELS[code]
    return EVENT_LABELS.get(kind, kind.replace("_", " ").capitalize())


# Detail members that name another effect, and how the timeline says so: a compensation's
# link either way, and the command a readback found the owner took instead of this one.
EFFECT_KEYS = {
    "compensates": "compensates",
    "by": "compensated by",
    "overwritten_by": "the owner kept instead",
}


@register.simple_tag
def effect_event_detail(detail: dict[str, Any] | None) -> SafeString:
    """An effect event's detail, with a task's dotted name replaced by what it does and the
    effects a compensation links shown as links."""
    if not detail:
        return event_detail(detail)
    plain = {
        ("check" if name == "task" else name): TASK_LABELS.get(value, value)
        if name == "task"
        else value
        for name, value in detail.items()
        if name not in EFFECT_KEYS
    }
    links = format_html_join(
        "",
        '<span class="pair"><span class="muted">{}</span> <a class="mono" href="{}">{}</a></span>',
        (
            (label, reverse("console-effect", args=[detail[name]]), detail[name])
            for name, label in EFFECT_KEYS.items()
            if isinstance(detail.get(name), str) and detail[name]
        ),
    )
    return format_html("{}{}", event_detail(plain) if plain else "", links)


@register.simple_tag
def evidence_link(evidence_id: str) -> SafeString:
    """An evidence id as a link to its page (the ledger entry the step recorded)."""
    if not evidence_id:
        return EMPTY
    return format_html(
        '<a class="tag mono" href="{}">{}</a>',
        reverse("console-evidence", args=[evidence_id]),
        evidence_id,
    )
