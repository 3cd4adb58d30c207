"""The quarantine page: every source and memory class with its state, and the operators'
dialog (preview, reason, typed confirmation).

Inside a test transaction nothing runs on commit, so a new quarantine stays "applying" until
the test plays the worker with `quarantine_apply`.
"""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.models import Effect, Quarantine
from reconcile_app.services.quarantine import quarantine_create, quarantine_lift
from tests.reconcile_app.console.conftest import commit_effect
from tests.reconcile_app.console.quarantine_steps import (
    new,
    quarantined,  # noqa: F401 (a fixture)
    row_of,
)

# --- The page -------------------------------------------------------------------------------


def test_every_source_and_memory_class_is_listed_with_its_state(
    auditor_browser, estate, make_snapshot, operator
):
    make_snapshot(claimed="collect")  # a claim of class "episodic"
    # A class known only because a quarantine once named it (lifted since) is still listed.
    old = quarantine_create(
        scope="memory_class", target="legacy-notes", reason="import bug", actor=operator.user
    )
    quarantine_lift(quarantine_id=old.quarantine_id, reason="fixed", actor=operator.user)
    page = auditor_browser.get("/quarantine/").content.decode()
    for source in ("case-service", "complaints-service", "customer-master", "eval-registry"):
        row = row_of(page, f"target-source-{source}")
        assert 'data-state="trusted"' in row
        assert "owned by" in row
    for memory_class in ("episodic", "legacy-notes"):
        row = row_of(page, f"target-memory-class-{memory_class}")
        assert '<span class="badge badge-grey">trusted</span>' in row


def test_a_declared_class_no_memory_was_written_in_yet_can_be_quarantined(operator_browser, estate):
    """Declared by its file (the API quarantines it too): listed, and its dialog opens, before
    the first memory of it arrives, e.g. a policy class a poisoning is feared to reach."""
    page = operator_browser.get("/quarantine/").content.decode()
    assert 'data-state="trusted"' in row_of(page, "target-memory-class-house-rules")
    response = new(operator_browser, "house-rules", scope="memory_class")
    assert response.status_code == 200
    assert 'id="quarantine-form"' in response.content.decode()
    assert operator_browser.get("/quarantine/targets/memory_class/house-rules/").status_code == 200


def test_memory_classes_of_stored_memories_are_listed(auditor_browser, registry, agent):
    from tests.reconcile_app.facts.conftest import remember

    remember(agent, "baseline.math-eval", "m-1", "ckpt-0519", "registry@r18")
    page = auditor_browser.get("/quarantine/").content.decode()
    assert 'data-state="trusted"' in row_of(page, "target-memory-class-operational")


def test_an_active_quarantine_shows_who_why_since_and_what_it_affects(
    auditor_browser, quarantined, make_snapshot
):
    row = row_of(auditor_browser.get("/quarantine/").content.decode(), "target-source-case-service")
    assert '<span class="badge badge-purple">applied</span>' in row
    assert "olivia-operator" in row
    assert "Owner reports corrupt exports." in row
    assert "<time datetime=" in row
    assert "until lifted" in row
    for label in ("snapshots", "allowed decisions", "pending effects", "effects"):
        assert label in row
    assert 'data-polling="false"' in row and "hx-trigger" not in row


def test_operators_are_offered_the_dialogs_and_others_see_state_only(
    operator_browser, auditor_browser, reviewer_browser, quarantined
):
    page = operator_browser.get("/quarantine/").content.decode()
    assert 'href="/quarantine/new/?scope=source&amp;target=complaints-service"' in page
    assert f'href="/quarantine/{quarantined.quarantine_id}/lift/"' in page
    assert '<dialog id="ops-dialog"' in page
    for client in (auditor_browser, reviewer_browser):
        page = client.get("/quarantine/").content.decode()
        assert "/quarantine/new/" not in page and "/lift/" not in page
        assert 'id="ops-dialog"' not in page  # the quarantine dialog (not the shortcuts one)
        assert 'id="state-only"' in page


def test_page_loads_its_dialog_script_and_styles_locally(operator_browser, estate):
    page = operator_browser.get("/quarantine/").content.decode()
    assert '<script src="/static/reconcile/dialog.js" defer></script>' in page
    assert '<link rel="stylesheet" href="/static/reconcile/oversight.css">' in page
    assert "<script>" not in page  # the CSP forbids inline scripts


# --- The dialog -----------------------------------------------------------------------------


def test_dialog_previews_what_a_source_quarantine_would_touch(operator_browser, make_snapshot):
    make_snapshot(claimed="collect")
    response = new(operator_browser)
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" not in body
    # Each count opens the list it counts (in a new tab: the dialog keeps its draft).
    snapshots = re.search(
        r'<li data-name="snapshots"><a href="([^"]+)" target="_blank" rel="noopener">'
        r'<strong class="num">1</strong> snapshots</a></li>',
        body,
    )
    assert snapshots and "source=case-service" in snapshots.group(1)
    listed = operator_browser.get(html.unescape(snapshots.group(1))).content.decode()
    assert listed.count('<tr class="') - listed.count("empty") >= 1
    assert 'data-name="effects_pending"' in body
    assert 'data-must-match="case-service"' in body
    assert 'name="reason"' in body and "required" in body
    assert 'type="datetime-local"' in body
    assert 'hx-post="/quarantine/new/"' in body
    assert "csrfmiddlewaretoken" in body
    assert not Quarantine.objects.exists()  # the preview writes nothing


def test_the_effects_count_opens_the_effects_it_counts(operator_browser, agent, estate):
    """The count looks back to the quarantine's start; so does the list it opens."""
    commit_effect(agent, "e-old")
    commit_effect(agent, "e-new")
    Effect.objects.filter(idempotency_key="e-old").update(
        created_at=timezone.now() - timedelta(days=30)
    )
    body = new(operator_browser).content.decode()
    effects = re.search(
        r'<li data-name="effects"><a href="([^"]+)"[^>]*><strong class="num">1</strong>', body
    )
    assert effects, body
    listed = operator_browser.get(html.unescape(effects.group(1))).content.decode()
    assert re.findall(r'href="/effects/(e-[a-z]+)/"', listed) == ["e-new"]


def test_dialog_previews_a_memory_class(operator_browser, registry, agent):
    from tests.reconcile_app.facts.conftest import remember

    remember(agent, "baseline.math-eval", "m-1", "ckpt-0519", "registry@r18")
    body = new(operator_browser, "operational", scope="memory_class").content.decode()
    assert re.search(
        r'<li data-name="memories"><a href="/lineage/blast-radius/\?memory_class=operational"'
        r'[^>]*><strong class="num">1</strong> memories</a></li>',
        body,
    )
    assert "never count as confirmed" in body


def test_dialog_without_htmx_is_a_page_of_its_own(operator_browser, estate):
    response = new(operator_browser, htmx=False)
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" in body and 'id="quarantine-form"' in body
    assert 'class="active" aria-current="page">Quarantine</a>' in body


@pytest.mark.parametrize(
    "query", ["scope=source&target=nowhere", "scope=galaxy&target=x", "scope=memory_class&target=x"]
)
def test_dialog_for_an_unknown_target_is_not_found(operator_browser, estate, query):
    assert operator_browser.get(f"/quarantine/new/?{query}").status_code == 404


def test_dialog_for_a_quarantined_target_says_so(operator_browser, quarantined):
    response = new(operator_browser)
    assert response.status_code == 409
    body = response.content.decode()
    assert 'id="already-quarantined"' in body and 'id="quarantine-form"' not in body


def test_the_pending_effects_count_opens_the_effects_it_counts(operator_browser, agent, estate):
    """Pending is three statuses of any age: the list it opens holds exactly those."""
    for key in ("e-sent", "e-unknown", "e-awaiting", "e-verified", "e-rejected"):
        commit_effect(agent, key)
    for key, status in (
        ("e-sent", "sent"),
        ("e-unknown", "unknown"),
        ("e-awaiting", "accepted"),
        ("e-verified", "verified"),
        ("e-rejected", "rejected"),
    ):
        Effect.objects.filter(idempotency_key=key).update(status=status)
    Effect.objects.filter(idempotency_key="e-unknown").update(
        created_at=timezone.now() - timedelta(days=30)
    )
    body = new(operator_browser).content.decode()
    pending = re.search(
        r'<li data-name="effects_pending"><a href="([^"]+)"[^>]*><strong class="num">3</strong>',
        body,
    )
    assert pending, body
    listed = operator_browser.get(html.unescape(pending.group(1))).content.decode()
    assert sorted(re.findall(r'href="/effects/(e-[a-z]+)/"', listed)) == [
        "e-awaiting",
        "e-sent",
        "e-unknown",
    ]
    assert 'id="pending-note"' in listed
