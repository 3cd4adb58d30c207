"""A reviewer never decides what they had a part in, and an attempt to is on the record.

Refused: an escalation they raised; keeping a fact record they wrote; approving what rests on
evidence they attested (an operator who also reviews would otherwise vouch for their own
work). Each refusal is 403 `self_approval_forbidden`, and it is audited
(`escalation.approve.refused`, `escalation.reject.refused`): the decision's transaction is
rolled back, so before, an attempt at separation of duties' one forbidden move left only a
request log line, which an auditor reviewing who tried what never sees.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import transaction

from reconcile_app.errors import Forbidden
from reconcile_app.models import Escalation
from reconcile_app.selectors.approvals import evidence_attested_by
from reconcile_app.selectors.kept_records import records_kept_attested_by, records_kept_written_by
from reconcile_app.services.audit import audit_record

SELF_APPROVAL = "self_approval_forbidden"


def raised_by_reviewer_check(escalation: Escalation, reviewer: Any) -> None:
    """403 `self_approval_forbidden` when the reviewer raised the escalation: first of all."""
    raiser = escalation.requested_by
    if raiser is not None and raiser.user_id == reviewer.pk:
        raise Forbidden("a reviewer never decides an escalation they raised", code=SELF_APPROVAL)


def approval_vouching_check(
    escalation: Escalation, reviewer: Any, selected_ref: str | None
) -> None:
    """403 `self_approval_forbidden` when approving would keep a record the reviewer wrote
    or vouch for evidence they attested."""
    mine = records_kept_written_by(reviewer, escalation, selected_ref)
    if mine:
        # Operators may write any fact record: one who also reviews would otherwise
        # settle an ambiguity in favour of their own record, approving their own change.
        raise Forbidden(
            f"a reviewer never keeps a record they wrote ({', '.join(mine)})",
            code=SELF_APPROVAL,
            kept=mine,
        )
    # The grounds the approval would vouch for: a fact key's kept records' derivation, or
    # the evidence a decision's reads (a promotion's memory) rest on.
    if escalation.fact_key:
        attested = records_kept_attested_by(reviewer, escalation, selected_ref)
    else:
        attested = evidence_attested_by(reviewer, escalation)
    if attested:
        raise Forbidden(
            f"a reviewer never approves what rests on evidence they attested "
            f"({', '.join(attested)})",
            code=SELF_APPROVAL,
            attested=attested,
        )


@contextmanager
def refusals_of_own_part_audited(
    *, escalation_id: str, reviewer: Any, approve: bool, rationale: str, request_id: str
) -> Iterator[None]:
    """Around the decision's transaction: once it is rolled back, a self-approval refused in
    it is recorded in a transaction of its own, and the refusal raised as it was."""
    try:
        yield
    except Forbidden as refusal:
        if refusal.code == SELF_APPROVAL:
            with transaction.atomic():
                audit_record(
                    actor=reviewer,
                    action=f"escalation.{'approve' if approve else 'reject'}.refused",
                    object_kind="escalation",
                    object_ref=escalation_id,
                    reason=rationale,
                    request_id=request_id,
                    after={"code": refusal.code, "detail": refusal.detail, **refusal.extra},
                )
        raise
