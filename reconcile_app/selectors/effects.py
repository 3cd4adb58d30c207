"""Reads of effects: scoped for the API, the console's triage queue and one effect's story.

People in a role read every effect; an agent reads its own (another principal's is 404).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from reconcile_app.choices import EffectStatus, EscalationStatus
from reconcile_app.errors import NotFound
from reconcile_app.models import Effect, EffectEvent, Escalation, Source
from reconcile_app.roles import is_staff_role
from reconcile_app.selectors.contracts import contract_spec
from reconcile_app.sources import adapter_for

# Tabs in triage order: what nobody has proven first. "accepted" is awaiting its readback.
EFFECT_TABS: tuple[str, ...] = (
    EffectStatus.UNKNOWN,
    EffectStatus.POSTCONDITION_FAILED,
    EffectStatus.ACCEPTED,
    EffectStatus.VERIFIED,
    EffectStatus.REJECTED,
    EffectStatus.NOT_EXECUTED,
    "all",
)
# Queues someone is waiting on: oldest first. Settled outcomes: newest first.
OLDEST_FIRST = (EffectStatus.UNKNOWN, EffectStatus.POSTCONDITION_FAILED, EffectStatus.ACCEPTED)
# Nothing will change these on its own, and no operator action applies to them.
FINAL = frozenset({EffectStatus.VERIFIED, EffectStatus.REJECTED, EffectStatus.NOT_EXECUTED})
# Work is under way without anyone asking: the sender or the automatic readback.
IN_FLIGHT = frozenset({EffectStatus.RECORDED, EffectStatus.SENT, EffectStatus.ACCEPTED})
CHECKABLE = frozenset(
    {EffectStatus.UNKNOWN, EffectStatus.ACCEPTED, EffectStatus.POSTCONDITION_FAILED}
)
RESOLVABLE = frozenset({EffectStatus.UNKNOWN, EffectStatus.POSTCONDITION_FAILED})
# What the owner accepted, and so what a compensation may undo (services/effects/compensation).
COMPENSABLE = frozenset(
    {EffectStatus.ACCEPTED, EffectStatus.VERIFIED, EffectStatus.POSTCONDITION_FAILED}
)
CHECK_REQUESTED = "check_requested"


# A compensation that was refused or never executed undid nothing (services/effects/compensation).
UNDID_NOTHING = (EffectStatus.REJECTED, EffectStatus.NOT_EXECUTED)


def with_compensation_links(effects: QuerySet[Effect]) -> QuerySet[Effect]:
    """Each effect with the key it compensates (a join) and `compensated_by_key`, the latest
    compensation of it that was not refused (a subquery): no query per row."""
    latest = (
        Effect.objects.filter(compensates=OuterRef("pk"))
        .exclude(status__in=UNDID_NOTHING)
        .order_by("-created_at", "-pk")
        .values("idempotency_key")[:1]
    )
    return effects.select_related("compensates").annotate(compensated_by_key=Subquery(latest))


def effects_visible_to(user: Any) -> QuerySet[Effect]:
    # An effect names its snapshot by id: the content (kilobytes a snapshot) is not read.
    effects = with_compensation_links(
        Effect.objects.select_related(
            "snapshot", "decision", "principal", "source", "escalation"
        ).defer("snapshot__content")
    )
    if is_staff_role(user):
        return effects
    return effects.filter(principal__user=user)


def effect_get(*, user: Any, idempotency_key: str) -> Effect:
    """One effect with its timeline, as the caller may see it (404 otherwise)."""
    effect = (
        effects_visible_to(user)
        .prefetch_related("events")
        .filter(idempotency_key=idempotency_key)
        .first()
    )
    if effect is None:
        raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
    return effect


def console_effects() -> QuerySet[Effect]:
    """Effects with their source and snapshot id; the snapshot's big `content` is not read."""
    return Effect.objects.select_related("source", "snapshot").defer("snapshot__content")


def effect_queue_order(queryset: QuerySet[Effect], tab: str) -> QuerySet[Effect]:
    if tab in OLDEST_FIRST:
        return queryset.order_by("created_at", "id")
    return queryset.order_by("-created_at", "-id")


def effect_status_counts(queryset: QuerySet[Effect]) -> dict[str, int]:
    """A count per tab, in one aggregate over the already-filtered rows."""
    counts = queryset.order_by().aggregate(
        all=Count("pk"),
        **{
            status: Count("pk", filter=Q(status=status))
            for status in EFFECT_TABS
            if status != "all"
        },
    )
    return {key: value or 0 for key, value in counts.items()}


def effect_source_names() -> list[str]:
    """Sources effects were sent to, suggested in the filter form.

    Asked of each source (one probe of the effects' source index apiece), not as the
    distinct sources of every effect: that read the whole effects table on each page load.
    """
    sent_to = Effect.objects.filter(source=OuterRef("pk"))
    return list(
        Source.objects.filter(Exists(sent_to)).order_by("name").values_list("name", flat=True)
    )


@dataclass(frozen=True)
class EffectState:
    """What the status panel shows, and whether it should keep asking the server."""

    effect: Effect
    last_event: EffectEvent | None

    @property
    def status(self) -> str:
        return self.effect.status

    @property
    def final(self) -> bool:
        return self.effect.status in FINAL

    @property
    def check_pending(self) -> bool:
        """An operator asked for a check and no worker has answered it yet.

        A check the worker could not conclude (the source quarantined, the owner down for a
        readback) is answered with a note on the effect and no event (effect_check_failed):
        a note from after the request is that answer, and the panel then says why."""
        if self.last_event is None or self.last_event.kind != CHECK_REQUESTED:
            return False
        noted = self.effect.last_check_error_at
        return not (self.effect.last_check_error and noted and noted >= self.last_event.at)

    @property
    def working(self) -> bool:
        """Something is under way that will change this effect without anyone acting."""
        return not self.final and (self.check_pending or self.effect.status in IN_FLIGHT)

    @property
    def stuck(self) -> str:
        """Why the automatic readback or resolution keeps failing ("" when it is not):
        the owner or its ledger unavailable, the source quarantined, a replica behind."""
        if self.effect.status not in (EffectStatus.ACCEPTED, EffectStatus.UNKNOWN):
            return ""
        return self.effect.last_check_error

    @property
    def checkable(self) -> bool:
        return self.effect.status in CHECKABLE and not self.check_pending

    @property
    def resolvable(self) -> bool:
        return self.effect.status in RESOLVABLE

    @property
    def may_still_execute_until(self) -> datetime | None:
        return may_still_execute_until(self.effect)

    @property
    def version(self) -> str:
        """Changes whenever the effect does: every transition writes an event."""
        return f"{self.effect.status}.{self.last_event.pk if self.last_event else 0}"


@dataclass(frozen=True)
class EffectDetail:
    state: EffectState
    events: list[EffectEvent]
    escalations: list[Escalation]

    @property
    def effect(self) -> Effect:
        return self.state.effect

    @property
    def compensated_by(self) -> str:
        return getattr(self.effect, "compensated_by_key", None) or ""

    @property
    def compensable(self) -> bool:
        """The owner accepted it and no compensation of it stands."""
        return self.effect.status in COMPENSABLE and not self.compensated_by

    @property
    def compensation_actions(self) -> list[str]:
        """The actions of the effect's contract version (the snapshot's: cached, no query)."""
        return sorted(contract_spec(self.effect.snapshot.contract).actions)

    @property
    def open_escalation(self) -> Escalation | None:
        return next(
            (item for item in self.escalations if item.status == EscalationStatus.OPEN), None
        )


def _effect(idempotency_key: str) -> Effect:
    effect = (
        with_compensation_links(console_effects())
        .select_related("principal", "decision", "escalation", "snapshot__contract")
        .filter(idempotency_key=idempotency_key)
        .first()
    )
    if effect is None:
        raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
    return effect


def console_effect_detail(*, idempotency_key: str) -> EffectDetail:
    """The effect, its whole timeline and its escalations: three queries."""
    effect = _effect(idempotency_key)
    events = list(EffectEvent.objects.filter(effect=effect).order_by("at", "pk"))
    escalations = list(
        Escalation.objects.filter(effect=effect)
        .select_related("decided_by")
        .order_by("-opened_at", "-pk")
    )
    return EffectDetail(
        state=EffectState(effect=effect, last_event=events[-1] if events else None),
        events=events,
        escalations=escalations,
    )


def console_effect_state(*, idempotency_key: str) -> EffectState:
    """Just what the status panel polls for: two queries."""
    effect = _effect(idempotency_key)
    last_event = EffectEvent.objects.filter(effect=effect).order_by("-at", "-pk").first()
    return EffectState(effect=effect, last_event=last_event)


def may_still_execute_until(effect: Effect, now: datetime | None = None) -> datetime | None:
    """While an unknown outcome is within its owner's execution bound, when that ends
    (counted from its sending, or its creation for a row without a sending time, as the
    worker's resolution counts): until then the owner may still run the command, and a
    person's "it did not happen" is premature. No query when its source is loaded."""
    if effect.status != EffectStatus.UNKNOWN:
        return None
    until = adapter_for(effect.source).executes_until(effect.sent_at or effect.created_at)
    return until if until > (now or timezone.now()) else None
