"""An `http` owner's authority answer whose owner or source revision no record can hold.

A fact record keeps at most 200 characters of each, and so does an escalation of its owner:
a longer `owner` from the owner system opened the key's escalation for an owner-less record
with a value the table refused, and `GET /facts/{key}/current` answered 500.
"""

from __future__ import annotations

import pytest

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Escalation, Source
from reconcile_app.sources import adapter_for
from tests.reconcile_app.facts.conftest import REGISTRY, current, remember
from tests.reconcile_app.sources.conftest import stub_owner  # noqa: F401

KEY = "baseline.ownerless"


@pytest.fixture
def registry_over_http(registry, stub_owner) -> Source:
    """The eval registry as a real owner answering over HTTP (the stub)."""
    Source.objects.filter(name=REGISTRY).update(adapter="http", base_url=stub_owner.url, options={})
    return Source.objects.get(name=REGISTRY)


@pytest.mark.parametrize(
    ("owner", "revision"),
    [("o" * 201, "registry@r18"), ("eval-registry", "r" * 201)],
    ids=["owner", "source_revision"],
)
def test_an_authority_longer_than_a_record_holds_is_unavailable(
    registry_over_http, stub_owner, owner, revision
):
    stub_owner.body = {"owner": owner, "source_revision": revision}

    answer = adapter_for(registry_over_http).authority(KEY)

    assert answer.status == ReadStatus.UNAVAILABLE
    assert "201 characters" in answer.detail
    assert "at most 200" in answer.detail


def test_an_owner_name_at_the_bound_is_taken(registry_over_http, stub_owner):
    stub_owner.body = {"owner": "o" * 200, "source_revision": "registry@r18"}

    answer = adapter_for(registry_over_http).authority(KEY)

    assert (answer.status, answer.owner) == (ReadStatus.OK, "o" * 200)


def test_an_owner_less_record_under_an_overlong_owner_is_no_500(
    registry_over_http, stub_owner, agent
):
    stub_owner.body = {"owner": "o" * 300, "source_revision": "registry@r18"}
    remember(agent, KEY, "ol-v18", "ckpt-0519", "registry@r18", owner=None)

    response = current(agent, KEY)

    assert response.status_code == 503, response.content
    assert response.json()["code"] == "current_authority_unavailable"
    assert not Escalation.objects.filter(fact_key=KEY).exists()
