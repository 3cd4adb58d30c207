"""What a snapshot's approval reads of its relations (reconcile_app/selectors/approvals.py):
a stored snapshot reads only its escalations. (A snapshot just issued carries its relations:
the reconcile endpoint's pinned query count covers that.)"""

from __future__ import annotations

import pytest

from reconcile_app.models import DecisionSnapshot
from reconcile_app.selectors.approvals import snapshot_approval
from tests.reconcile_app.gate.test_epoch_caches import SUBJECT, _reconcile, account


@pytest.mark.django_db
def test_a_stored_snapshots_approval_reads_its_escalations_alone(
    estate, agent, django_assert_num_queries
):
    account(SUBJECT)
    response = _reconcile(agent)
    assert response.status_code == 201, response.content
    stored = DecisionSnapshot.objects.get(snapshot_id=response.json()["snapshot_id"])

    # The effect gate asks this of a snapshot loaded without its relations: the escalations
    # it opened and the one it joined, not its contradictions or taints.
    with django_assert_num_queries(2):
        assert snapshot_approval(stored) is None
