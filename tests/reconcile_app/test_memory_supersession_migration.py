"""Migration 0033: memory supersession links recorded as derivations (before the provenance
service recorded them as invalidations) are relabelled, so a correction of the superseded
record's grounds stops reaching what recalled its successor."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from lineage_app.models import Edge
from tests.migrations import migrated_back_to
from tests.reconcile_app.effects.conftest import collectible, remember_collect  # noqa: F401

BEFORE = [("reconcile_app", "0032_activation_attempts")]


remember = remember_collect


def links(src: str, dst: str) -> set[str]:
    return set(
        Edge.objects.filter(
            src__kind="memory", src__ref=src, dst__kind="memory", dst__ref=dst
        ).values_list("relation", flat=True)
    )


@pytest.mark.django_db(transaction=True)
def test_supersession_recorded_as_a_derivation_becomes_an_invalidation(collectible, agent):
    older = remember(agent, ["ev-collect"])
    newer = remember(agent, ["ev-collect"], supersedes=older)
    made_from = remember(agent, [f"memory:{newer}"], supersedes=newer)
    assert links(older, newer) == {"wasInvalidatedBy"}
    assert links(newer, made_from) == {"wasDerivedFrom", "wasInvalidatedBy"}
    with migrated_back_to(BEFORE):
        # As the links were recorded before: one derivation edge for each successor.
        Edge.objects.filter(src__ref=older, dst__ref=newer).update(relation="wasDerivedFrom")
        Edge.objects.filter(
            src__ref=newer, dst__ref=made_from, relation="wasInvalidatedBy"
        ).delete()

    assert links(older, newer) == {"wasInvalidatedBy"}
    # Made from the record it supersedes as well: still derived, and now invalidated too.
    assert links(newer, made_from) == {"wasDerivedFrom", "wasInvalidatedBy"}


@pytest.mark.django_db(transaction=True)
def test_migrating_back_draws_supersession_as_the_derivation_it_was(collectible, agent):
    older = remember(agent, ["ev-collect"])
    newer = remember(agent, ["ev-collect"], supersedes=older)
    made_from = remember(agent, [f"memory:{newer}"], supersedes=newer)

    with migrated_back_to(BEFORE):
        # What the code before the migration walks: one derivation edge per successor.
        assert links(older, newer) == {"wasDerivedFrom"}
        assert links(newer, made_from) == {"wasDerivedFrom"}

    assert links(older, newer) == {"wasInvalidatedBy"}
    assert links(newer, made_from) == {"wasDerivedFrom", "wasInvalidatedBy"}


@pytest.mark.django_db
def test_the_command_relabels_what_an_earlier_release_drew_after_the_migration(collectible, agent):
    """A rolling upgrade across 0033: a web process of the earlier release, still serving
    after the migration, links each supersession as a derivation (seen live from d3982d5)."""
    older = remember(agent, ["ev-collect"])
    newer = remember(agent, ["ev-collect"], supersedes=older)
    Edge.objects.filter(src__ref=older, dst__ref=newer).update(relation="wasDerivedFrom")
    out = io.StringIO()

    call_command("memory_supersessions_relabel", stdout=out)

    assert links(older, newer) == {"wasInvalidatedBy"}
    assert out.getvalue().strip() == "memory supersessions relabelled: 1"
    call_command("memory_supersessions_relabel", stdout=out)
    assert out.getvalue().splitlines()[-1] == "memory supersessions relabelled: 0"
