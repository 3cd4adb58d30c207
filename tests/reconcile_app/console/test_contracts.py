"""The Contracts pages: every class and its versions, one version, and two side by side."""

from __future__ import annotations

import pytest

from reconcile_app.models import Contract
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.contract_world import (  # noqa: F401 (fixtures)
    ACTIVE,
    DRAFT,
    DRAFT_FILE,
    activate,
    contract_path,
    contract_world,
    gates,
    load_draft,
    version_file,
)

# session, user, the user's groups, every version (with its newest activation's id), those
# activations.
LIST_QUERIES = 5
# session, user, the user's groups, the version, its fields (with their sources), rules and
# actions, its activations (and what retired it), the class's versions, its audit timeline.
DETAIL_QUERIES = 10
# session, user, the user's groups, the class's versions, the two versions' fields (with
# their sources), rules and actions; the class's latest decisions, decided again under each
# version (their evidence is a query more once one cites any; each version's spec is read
# once per process, so the count is taken after a first view).
DIFF_QUERIES = 8


def section(page: str, element_id: str) -> str:
    start = page.index(f'id="{element_id}"')
    return page[start : page.index("</section>", start)]


def row(page: str, row_id: str) -> str:
    start = page.index(f'<tr id="{row_id}"')
    return page[start : page.index("</tr>", start)]


# --- Every class --------------------------------------------------------------------------------


def test_every_class_is_listed_with_its_versions(auditor_browser, contract_world):
    page = auditor_browser.get("/contracts/").content.decode()

    for name in (COLLECTIONS, "warehouse-pick", "dispatch-card", "collections-letter"):
        assert f'id="class-{name}"' in page, name
    collections = section(page, f"class-{COLLECTIONS}")
    assert f'Active: <a class="mono" href="/contracts/{COLLECTIONS}/{ACTIVE}/">{ACTIVE}</a>' in (
        collections
    )
    live = row(collections, f"version-{COLLECTIONS}-{ACTIVE}")
    assert '<span class="badge badge-green">active</span>' in live
    assert '<span class="tag">reconstruct</span>' in live
    assert 'data-gate-status="passed"><span class="badge badge-green">passed</span> 6' in live
    assert (
        'data-gate-status="not_required"><span class="badge badge-grey">not required</span> 1'
        in (live)
    )
    assert "load_contracts" in live  # who asked for its latest activation
    draft = row(collections, f"version-{COLLECTIONS}-{DRAFT}")
    assert '<span class="badge badge-blue">draft</span>' in draft
    assert f'href="/contracts/{COLLECTIONS}/{DRAFT}/"' in draft
    assert "not run" in draft
    assert f'href="/contracts/{COLLECTIONS}/diff/?from={ACTIVE}&amp;to={DRAFT}"' in draft
    # Newest loaded first.
    assert collections.index(f"version-{COLLECTIONS}-{DRAFT}") < collections.index(
        f"version-{COLLECTIONS}-{ACTIVE}"
    )


def test_a_refused_activation_shows_its_failed_gates_in_the_list(
    auditor_browser, contract_world, gates, reviewer
):
    gates.failing = {"replay"}
    activate(contract_world.draft, reviewer)
    draft = row(
        auditor_browser.get("/contracts/").content.decode(), f"version-{COLLECTIONS}-{DRAFT}"
    )
    assert '<span class="badge badge-blue">draft</span>' in draft
    assert 'data-gate-status="failed"><span class="badge badge-red">failed</span> 1' in draft
    assert '<span class="badge badge-red">refused</span>' in draft


def test_a_class_with_no_active_version_says_reconcile_refuses_it(
    auditor_browser, contract_world, tmp_path
):
    load_draft(tmp_path, version_file("1.0").replace(COLLECTIONS, "brand-new"))
    page = auditor_browser.get("/contracts/").content.decode()
    assert "No version is active: reconcile refuses this class" in section(page, "class-brand-new")


def test_contracts_is_in_the_navigation(auditor_browser, contract_world):
    for path in ("/contracts/", contract_path(contract_world.draft)):
        page = auditor_browser.get(path).content.decode()
        assert 'href="/contracts/" class="active" aria-current="page">Contracts</a>' in page


@pytest.mark.parametrize("extra_versions", [0, 5])
def test_list_query_count_does_not_grow(
    auditor_browser,
    contract_world,
    gates,
    reviewer,
    tmp_path,
    django_assert_num_queries,
    extra_versions,
):
    gates.failing = {"replay"}  # each extra version keeps a refused activation
    for index in range(extra_versions):
        draft = load_draft(
            tmp_path, version_file(f"8.{index}", max_age=200 + index), f"v{index}.yaml"
        )
        activate(draft, reviewer)
    with django_assert_num_queries(LIST_QUERIES):
        response = auditor_browser.get("/contracts/")
    assert response.status_code == 200
    assert response.content.decode().count('data-status="draft"') == 1 + extra_versions


# --- One version --------------------------------------------------------------------------------


def test_a_draft_shows_what_it_declares(auditor_browser, contract_world):
    page = auditor_browser.get(contract_path(contract_world.draft)).content.decode()

    assert f"{COLLECTIONS}@{DRAFT}</h1>" in page
    assert 'id="contract-status" data-status="draft"' in page
    assert "A draft: never served until a reviewer activates it" in page
    assert f'href="/contracts/{COLLECTIONS}/diff/?from={ACTIVE}&amp;to={DRAFT}"' in page
    obligation = section(page, "obligation")
    for answer in ("high", "contested", "required"):
        assert f'<dd class="mono">{answer}</dd>' in obligation
    assert "<li>consequence and mutability are both high</li>" in obligation
    assert "<li>authority is contested</li>" in obligation
    assert "<li>replay is required</li>" in obligation
    fields = page[page.index('id="contract-fields"') :]
    complaint = fields[fields.index('data-field="complaint_status"') :]
    assert "required <span" in complaint[:200] and "complaints-service" in complaint[:600]
    assert "120 s" in fields[: fields.index('data-field="complaint_status"')]
    assert "servicing-team" in fields  # the case service's owner
    rules = page[
        page.index('id="contract-rules"') : page.index("</table>", page.index("contract-rules"))
    ]
    assert rules.index(">deny<") < rules.index(">escalate<") < rules.index(">allow<")
    assert "no_rule_matched" in rules
    assert '<span class="tag mono">released</span>' in page  # the action's only value
    settings = section(page, "settings")
    assert "collections-2026-12" in settings and "60 s" in settings and "refuse" in settings
    release = section(page, "contract-release")
    assert "Not run yet" in release and 'data-polling="false"' in release
    assert "Never asked to go live." in page
    assert 'data-action="contract.load"' in page  # the audit timeline
    adr = page[page.index('<pre class="adr" id="adr">') :]
    assert f"# ADR: {COLLECTIONS} {DRAFT}" in adr and "Not run yet." in adr


def test_the_active_version_shows_its_gates_and_how_it_went_live(auditor_browser, contract_world):
    page = auditor_browser.get(contract_path(contract_world.active)).content.decode()
    assert "Served: every reconcile of" in page
    release = section(page, "contract-release")
    assert (
        '<span class="status-badge" id="release-status"><span class="badge badge-green">activated'
        in (release)
    )
    gates_table = release[release.index('id="release-gates"') :]
    assert gates_table.count("data-gate=") == 7
    assert 'data-gate="replay" data-gate-status="passed"' in gates_table
    assert "replay: 2 checks passed" in gates_table
    assert 'data-gate="invariance" data-gate-status="not_required"' in gates_table
    history = page[page.index('id="activation-history"') :]
    assert '<tr data-status="activated">' in history and "load_contracts" in history
    assert 'data-action="contract.activate"' in page
    assert 'id="activate-form"' not in page  # already active: nothing to activate


def test_user_text_is_escaped_everywhere_and_the_record_stays_text(
    auditor_browser, contract_world, tmp_path
):
    hostile = DRAFT_FILE.replace(
        "A complaint must have been read before a hold is released.",
        '"<script>alert(1)</script> # not a heading"',
    )
    draft = load_draft(tmp_path, hostile.replace('"7.4"', '"7.5"'), "hostile.yaml")
    page = auditor_browser.get(contract_path(draft)).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&gt; &lt;script&gt;alert(1)&lt;/script&gt; # not a heading" in page  # quoted, escaped


@pytest.mark.parametrize("refusals", [0, 4])
def test_detail_query_count_does_not_grow(
    auditor_browser, contract_world, gates, reviewer, django_assert_num_queries, refusals
):
    gates.failing = {"replay"}
    for _ in range(refusals):
        activate(contract_world.draft, reviewer)
    with django_assert_num_queries(DETAIL_QUERIES):
        response = auditor_browser.get(contract_path(contract_world.draft))
    assert response.content.decode().count('<tr data-status="refused">') == refusals


def test_unknown_versions_and_classes_are_404(auditor_browser, contract_world):
    assert auditor_browser.get(f"/contracts/{COLLECTIONS}/9.9/").status_code == 404
    assert auditor_browser.get("/contracts/no-such-class/1.0/").status_code == 404
    assert auditor_browser.get("/contracts/no-such-class/diff/").status_code == 404
    assert auditor_browser.get(f"/contracts/{COLLECTIONS}/diff/?from=9.9").status_code == 404


def test_agents_never_reach_the_contracts_pages(agent, contract_world):
    client = signed_in(agent)
    for path in (
        "/contracts/",
        contract_path(contract_world.draft),
        contract_path(contract_world.draft, "release/"),
        f"/contracts/{COLLECTIONS}/diff/",
    ):
        assert client.get(path).status_code == 403, path


# --- Two versions side by side ------------------------------------------------------------------


def diff_row(page: str, table: str, key: str) -> str:
    body = page[page.index(f'id="diff-{table}"') :]
    start = body.index(f'data-key="{key}"')
    return body[body.rindex("<tr", 0, start) : body.index("</tr>", start)]


def test_the_diff_shows_both_versions_with_changes_highlighted(auditor_browser, contract_world):
    page = auditor_browser.get(
        f"/contracts/{COLLECTIONS}/diff/", {"from": ACTIVE, "to": DRAFT}
    ).content.decode()

    complaint = diff_row(page, "fields", "complaint_status")
    assert 'class="diff-changed"' in complaint
    assert '<mark class="differs">required</mark>' in complaint
    assert '<mark class="differs">optional</mark>' in complaint  # both sides mark it
    status = diff_row(page, "fields", "collections_status")
    assert '<mark class="differs">max age 120 s</mark>' in status and "max age 300 s" in status
    escalate = diff_row(page, "rules", "escalate 1")
    assert 'class="diff-changed"' in escalate
    assert "has(fields.complaint_status)" in escalate  # 7.3's condition, beside 7.4's
    assert "fields.complaint_status == &quot;new&quot;" in escalate
    assert 'class="diff-same"' in diff_row(page, "rules", "deny 1")
    release = diff_row(page, "actions", "release_collections_hold")
    assert '<mark class="differs">values: released</mark>' in release
    assert "values: any value the policy allows" in release
    assert 'class="diff-same"' in diff_row(page, "actions", "retain_manual_review")
    for setting in ("policy_version", "contradictions", "commit_window_seconds"):
        assert 'class="diff-changed"' in diff_row(page, "settings", setting), setting
    assert 'class="diff-same"' in diff_row(page, "settings", "reducer")
    assert 'class="diff-changed"' in diff_row(page, "settings", "obligation.authority")
    assert 'class="diff-same"' in diff_row(page, "settings", "level")
    assert "differences." in page[page.index('id="diff-summary"') :][:800]


def test_the_diff_defaults_to_the_active_version_against_the_newest(
    auditor_browser, contract_world
):
    page = auditor_browser.get(f"/contracts/{COLLECTIONS}/diff/").content.decode()
    start = page.index('id="diff-picker"')
    picker = page[start : page.index("</form>", start)]
    assert f'<option value="{ACTIVE}" selected>{ACTIVE} (active)</option>' in picker
    assert f'<option value="{DRAFT}" selected>{DRAFT} (draft)</option>' in picker


def test_any_two_versions_compare_and_a_version_with_itself_is_the_same(
    auditor_browser, contract_world
):
    reverse = auditor_browser.get(
        f"/contracts/{COLLECTIONS}/diff/", {"from": DRAFT, "to": ACTIVE}
    ).content.decode()
    assert '<mark class="differs">optional</mark>' in diff_row(
        reverse, "fields", "complaint_status"
    )
    same = auditor_browser.get(
        f"/contracts/{COLLECTIONS}/diff/", {"from": ACTIVE, "to": ACTIVE}
    ).content.decode()
    assert "the same version." in same
    assert 'class="diff-changed"' not in same and 'class="diff-added"' not in same


@pytest.mark.parametrize("extra_versions", [0, 5])
def test_diff_query_count_does_not_grow(
    auditor_browser, contract_world, tmp_path, django_assert_num_queries, extra_versions
):
    for index in range(extra_versions):
        load_draft(tmp_path, version_file(f"8.{index}", max_age=200 + index), f"v{index}.yaml")
    auditor_browser.get(f"/contracts/{COLLECTIONS}/diff/", {"from": ACTIVE, "to": DRAFT})
    with django_assert_num_queries(DIFF_QUERIES):
        response = auditor_browser.get(
            f"/contracts/{COLLECTIONS}/diff/", {"from": ACTIVE, "to": DRAFT}
        )
    assert response.status_code == 200
    assert Contract.objects.filter(decision_class=COLLECTIONS).count() == 2 + extra_versions
