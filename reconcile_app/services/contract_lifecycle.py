"""A contract version's life: draft → active → retired, only through release gates.

A reviewer (or `load_contracts`, for a deployer's load) asks for a version to go live; the
request is a ContractActivation. Its release gates (services/release_gates) run outside any
transaction — they use the pure engine and a scratch estate, never a live owner — and then,
in one transaction with the class's versions locked, the version becomes the one active
version (retiring the one before it) or the request is refused (`release_gate_failed`).
Activating a retired version is the rollback. Every step is audited with who, when and why.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from reconcile_app.choices import ActivationStatus, ContractStatus, Role
from reconcile_app.errors import Conflict, Forbidden, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import ConfigurationEpoch, Contract, ContractActivation
from reconcile_app.roles import has_role
from reconcile_app.services.audit import audit_record
from reconcile_app.services.enqueue import enqueue_on_commit
from reconcile_app.services.release_gates import release_gates_run

RELEASE_GATE_FAILED = "release_gate_failed"
# Starts of one activation's gates before it is failed: a run that kills its worker is
# redelivered (acks late, rejected when the worker is lost) and re-queued by the lost-work
# sweep, and would otherwise crash every worker that takes it, for ever.
ACTIVATION_ATTEMPTS_MAX = 3


@dataclass(frozen=True)
class Deployer:
    """The actor of a `load_contracts` run: a named operation, not a person."""

    username: str = "load_contracts"
    pk: None = None


def _new_id() -> str:
    return f"act_{secrets.token_hex(8)}"


def contract_activation_request(
    *, contract: Contract, actor: Any, rationale: str, request_id: str = ""
) -> ContractActivation:
    """A reviewer asks for `contract` to go live; the gates run in a Celery task."""
    if not has_role(actor, Role.REVIEWER):
        raise Forbidden("activating a contract version needs the reviewer role", code="forbidden")
    with transaction.atomic():
        activation = _activation_open(
            contract=contract,
            actor=actor,
            actor_name=actor.get_username(),
            rationale=rationale,
            request_id=request_id,
        )
        from reconcile_app.tasks import contract_activation_task

        activation_id = activation.activation_id
        enqueue_on_commit(contract_activation_task, activation_id)
    return activation


def contract_activate_now(
    *, contract: Contract, rationale: str, actor: Any = None, request_id: str = ""
) -> ContractActivation:
    """Open an activation and run it here (load_contracts: the deployer waits for the gates)."""
    actor = actor or Deployer()
    activation = _activation_open(
        contract=contract,
        actor=actor,
        actor_name=actor.username,
        rationale=rationale,
        request_id=request_id,
    )
    return contract_activation_run(activation_id=activation.activation_id)


def _activation_open(
    *, contract: Contract, actor: Any, actor_name: str, rationale: str, request_id: str
) -> ContractActivation:
    if says_nothing(rationale):
        raise ValidationFailed("activating a version needs a rationale", code="rationale_required")
    with transaction.atomic():
        contract = Contract.objects.select_for_update().get(pk=contract.pk)
        if contract.status == ContractStatus.ACTIVE:
            raise Conflict(f"{contract!s} is already active", code="already_active")
        running = contract.activations.filter(status=ActivationStatus.RUNNING).first()
        if running is not None:
            raise Conflict(
                f"{contract!s} is already being activated ({running.activation_id})",
                code="activation_in_progress",
                activation_id=running.activation_id,
            )
        activation = ContractActivation.objects.create(
            activation_id=_new_id(),
            contract=contract,
            requested_by=actor if getattr(actor, "pk", None) else None,
            requested_by_name=actor_name,
            rationale=rationale.strip(),
            request_id=request_id,
            level=contract.level,
            requested_at=timezone.now(),
        )
        audit_record(
            actor=actor,
            action="contract.activation_requested",
            object_kind="contract",
            object_ref=str(contract),
            reason=activation.rationale,
            request_id=request_id,
            before={"status": contract.status},
            after={"activation_id": activation.activation_id, "level": contract.level},
        )
    return activation


def contract_activation_run(*, activation_id: str) -> ContractActivation:
    """Run the gates, then activate or refuse. Safe to run twice: a finished one is returned."""
    activation = ContractActivation.objects.select_related("contract", "requested_by").get(
        activation_id=activation_id
    )
    if activation.status != ActivationStatus.RUNNING:
        return activation
    started = _attempt_started(activation)
    if started is None:
        return activation  # another worker is running these gates, or has finished them
    if started > ACTIVATION_ATTEMPTS_MAX:
        return _activation_finish(
            activation,
            gates=[],
            failed=[],
            broken=(
                f"the release gates were started {started - 1} times and never finished (the "
                "worker running them was lost each time: killed, out of memory, or crashed by "
                "the rule itself); nothing went live. Ask again once the cause is found."
            ),
        )
    try:
        results = release_gates_run(activation.contract, level=activation.level)
    except Exception as exc:  # the run broke: say so on the record rather than hang `running`
        return _activation_finish(
            activation,
            gates=[],
            failed=[],
            broken=f"the release gates could not run: {type(exc).__name__}: {exc}",
        )
    failed = [result.name for result in results if result.status == "failed"]
    return _activation_finish(
        activation, gates=[result.as_dict() for result in results], failed=failed
    )


def _attempt_started(activation: ContractActivation) -> int | None:
    """Count this start, committed before the gates run: a run that kills its worker leaves
    the count behind it for the redelivery to read. None when another start may still be
    running the gates (begun within the task time limit, past which Celery has killed it):
    a second copy of the task (the lost-work sweep re-queues one behind a busy queue) leaves
    the run to it rather than counting as a lost worker."""
    now = timezone.now()
    free = Q(attempt_started_at__isnull=True) | Q(
        attempt_started_at__lt=now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    )
    taken = ContractActivation.objects.filter(
        free, pk=activation.pk, status=ActivationStatus.RUNNING
    ).update(attempts=F("attempts") + 1, attempt_started_at=now)
    if not taken:
        return None
    return ContractActivation.objects.values_list("attempts", flat=True).get(pk=activation.pk)


def _activation_finish(
    activation: ContractActivation,
    *,
    gates: list[dict[str, Any]],
    failed: list[str],
    broken: str = "",
) -> ContractActivation:
    actor = activation.requested_by or Deployer(username=activation.requested_by_name)
    with transaction.atomic():
        activation = (
            ContractActivation.objects.select_for_update()
            .select_related("contract")
            .get(pk=activation.pk)
        )
        if activation.status != ActivationStatus.RUNNING:
            return activation  # another worker finished it meanwhile
        contract = activation.contract
        label = str(contract)
        now = timezone.now()
        activation.gates = gates
        activation.finished_at = now
        if not (broken or failed) and not _requester_still_reviews(activation):
            broken = (
                f"{activation.requested_by_name} no longer holds the reviewer role (or the "
                f"account was deactivated) since asking: {label} was not activated; a "
                "reviewer may ask again"
            )
        overtaken = None if broken or failed else _go_live(activation, contract, actor, now)
        if overtaken is not None:
            # Finishing late (a queued task, one re-queued after a lost worker) it would
            # retire a release that went live after it was asked for: nobody chose that.
            broken = (
                f"{overtaken} went live after this activation was requested: {label} was not "
                "activated over it; ask again to replace it"
            )
        if broken or failed:
            activation.status = ActivationStatus.FAILED if broken else ActivationStatus.REFUSED
            activation.detail = broken or (
                f"{RELEASE_GATE_FAILED}: {', '.join(failed)} failed; "
                f"{label} stays {contract.status}"
            )
            activation.save(update_fields=["gates", "finished_at", "status", "detail"])
            audit_record(
                actor=actor,
                action="contract.activation_refused",
                object_kind="contract",
                object_ref=label,
                reason=activation.rationale,
                request_id=activation.request_id,
                before={"status": contract.status},
                after={
                    "activation_id": activation.activation_id,
                    "code": "" if broken else RELEASE_GATE_FAILED,
                    "failed_gates": failed,
                    "detail": activation.detail,
                },
            )
            return activation
        activation.status = ActivationStatus.ACTIVATED
        activation.save(
            update_fields=["gates", "finished_at", "status", "detail", "replaced_version"]
        )
    return activation


def _requester_still_reviews(activation: ContractActivation) -> bool:
    """Whether the person who asked is still an active reviewer, read in the finishing
    transaction. The gates run in a worker, perhaps long after the request: a role taken
    away (or an account deactivated) meanwhile must not put a version live in that name.
    Taking either away moves the configuration epoch, whose row is locked here first (going
    live moves it anyway): a change committed before is read below, a later one waits. The
    deployer's own activations (`load_contracts`) have no person to ask about."""
    user = activation.requested_by
    if user is None:
        return True
    ConfigurationEpoch.objects.select_for_update(no_key=True).filter(pk=1).exists()
    fresh = type(user).objects.filter(pk=user.pk, is_active=True).first()
    return fresh is not None and has_role(fresh, Role.REVIEWER)


def _go_live(
    activation: ContractActivation, contract: Contract, actor: Any, now: Any
) -> Contract | None:
    """Make `contract` the class's one active version, retiring the one before it; or, when
    the active version went live after this activation was requested, change nothing and
    return it.

    Every version of the class is locked first (PostgreSQL; SQLite serialises writers), so
    two activations finishing at once happen one after the other: the second finds the
    first's version live since its request, and exactly one version is active (the partial
    unique index is the backstop).
    """
    # FOR NO KEY UPDATE, as an agent's access change locks its row (services/agent_access):
    # it serialises activations as FOR UPDATE did, but lets a snapshot of the class check its
    # contract foreign key (FOR KEY SHARE). An escalating snapshot holds the epochs from the
    # start of its transaction, which the status change below then moves: with FOR UPDATE
    # each waited on the other (PostgreSQL: deadlock detected, the reconcile a 503).
    versions = list(
        Contract.objects.select_for_update(no_key=True)
        .filter(decision_class=contract.decision_class)
        .order_by("pk")  # one lock order for every activation: no deadlock between two
    )
    current = next((item for item in versions if item.pk == contract.pk), contract)
    previous = next((item for item in versions if item.status == ContractStatus.ACTIVE), None)
    if (
        previous is not None
        and previous.pk != current.pk
        and previous.activated_at is not None
        and previous.activated_at > activation.requested_at
    ):
        return previous
    rollback = current.status == ContractStatus.RETIRED
    before = current.status
    if previous is not None and previous.pk != current.pk:
        previous.status = ContractStatus.RETIRED
        previous.save(update_fields=["status"])
        activation.replaced_version = previous.version
        audit_record(
            actor=actor,
            action="contract.retire",
            object_kind="contract",
            object_ref=str(previous),
            reason=activation.rationale,
            request_id=activation.request_id,
            before={"status": ContractStatus.ACTIVE.value},
            after={
                "status": ContractStatus.RETIRED.value,
                "replaced_by": current.version,
                "activation_id": activation.activation_id,
            },
        )
    current.status = ContractStatus.ACTIVE
    current.activated_at = now
    current.save(update_fields=["status", "activated_at"])
    audit_record(
        actor=actor,
        action="contract.rollback" if rollback else "contract.activate",
        object_kind="contract",
        object_ref=str(current),
        reason=activation.rationale,
        request_id=activation.request_id,
        before={"status": before},
        after={
            "status": ContractStatus.ACTIVE.value,
            "replaced_version": activation.replaced_version,
            "activation_id": activation.activation_id,
            "gates": [gate["name"] for gate in activation.gates if gate["status"] == "passed"],
        },
    )
    return None
