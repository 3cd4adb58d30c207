"""The snapshots list: filters in the URL, htmx partials, and a query count that holds."""

from __future__ import annotations

import pytest

from reconcile_app.models import DecisionSnapshot

# session, user, the user's groups, the paginator's count, the page of rows, and the filter
# form's two suggestion lists (decision classes, sources).
LIST_QUERIES = 7
PARTIAL_QUERIES = 5  # a partial does not re-render the form, so no suggestions


def test_list_shows_each_snapshot_with_badges_and_claim_summary(operator_browser, make_snapshot):
    snapshot = make_snapshot(claimed="collect")
    page = operator_browser.get("/snapshots/").content.decode()
    assert f'href="/snapshots/{snapshot.snapshot_id}/"' in page
    assert "collections-contact-release" in page and "v7.3" in page
    assert "account-17" in page and "collections-agent" in page
    assert '<span class="badge badge-red">deny</span>' in page
    assert '<span class="badge badge-amber">degraded</span>' in page
    assert "release_collections_hold" in page
    assert "1 contradicted" in page


def test_filters_live_in_the_query_string(operator_browser, make_snapshot):
    make_snapshot(subject="account-17")
    other = make_snapshot(subject="account-18")
    page = operator_browser.get("/snapshots/?subject=account-18").content.decode()
    assert other.snapshot_id in page
    assert page.count('href="/snapshots/snap_') == 1
    # The form shows the filter it applied.
    assert 'name="subject" value="account-18"' in page


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("result=deny", 2),
        ("result=allow", 0),
        ("completeness=degraded", 2),
        ("decision_class=collections-contact-release", 2),
        ("decision_class=warehouse-pick", 0),
        ("source=case-service", 2),
        ("source=warehouse-service", 0),
        ("reducer_version=hardship@3", 0),
    ],
)
def test_each_filter_narrows_the_list(operator_browser, make_snapshot, query, expected):
    make_snapshot(subject="account-17")
    make_snapshot(subject="account-18")
    page = operator_browser.get(f"/snapshots/?{query}").content.decode()
    assert page.count('href="/snapshots/snap_') == expected


def test_invalid_filter_value_is_reported_not_ignored(operator_browser, make_snapshot):
    make_snapshot()
    page = operator_browser.get("/snapshots/?result=maybe").content.decode()
    assert 'role="alert"' in page
    assert page.count('href="/snapshots/snap_') == 0


def test_pagination_is_in_the_url(operator_browser, make_snapshot):
    for index in range(27):
        make_snapshot(subject=f"account-{index}")
    first = operator_browser.get("/snapshots/").content.decode()
    assert first.count('href="/snapshots/snap_') == 25
    assert 'href="?page=2"' in first
    second = operator_browser.get("/snapshots/?page=2").content.decode()
    assert second.count('href="/snapshots/snap_') == 2
    assert "26\u201327 of 27" in second  # en dash, as typeset


def test_sorting_is_in_the_url_and_kept_by_pagination_links(operator_browser, make_snapshot):
    for index in range(27):
        make_snapshot(subject=f"account-{index:02d}")
    page = operator_browser.get("/snapshots/?sort=subject").content.decode()
    assert page.index("account-00") < page.index("account-01")
    assert "sort=subject&amp;page=2" in page or "page=2&amp;sort=subject" in page


def test_htmx_request_gets_only_the_table_partial(operator_browser, make_snapshot):
    snapshot = make_snapshot()
    response = operator_browser.get("/snapshots/?subject=account-17", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="snapshot-table"')
    assert "<html" not in body and 'snapshot-filters" class' not in body
    assert snapshot.snapshot_id in body
    # Links in the partial are fetched by htmx into the same region.
    assert 'hx-target="this" hx-swap="outerHTML" hx-push-url="true"' in body
    assert "HX-Request" in response["Vary"]


def test_htmx_history_restore_gets_the_whole_page(operator_browser, make_snapshot):
    make_snapshot()
    response = operator_browser.get(
        "/snapshots/", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in response.content.decode()


def test_filter_form_updates_the_url_through_htmx(operator_browser, make_snapshot):
    make_snapshot()
    page = operator_browser.get("/snapshots/").content.decode()
    assert 'id="snapshot-filters"' in page
    assert 'hx-get="/snapshots/" hx-target="#snapshot-table"' in page
    assert 'hx-push-url="true"' in page
    for name in (
        "decision_class",
        "subject",
        "result",
        "completeness",
        "reducer_version",
        "source",
    ):
        assert f'name="{name}"' in page


@pytest.mark.parametrize("count", [1, 30])
def test_list_query_count_does_not_grow_with_rows(
    operator_browser, make_snapshot, django_assert_num_queries, count
):
    for index in range(count):
        make_snapshot(subject=f"account-{index}", claimed="collect")
    assert DecisionSnapshot.objects.count() == count
    with django_assert_num_queries(LIST_QUERIES):
        response = operator_browser.get("/snapshots/")
    assert response.status_code == 200
    with django_assert_num_queries(PARTIAL_QUERIES):
        operator_browser.get("/snapshots/?page=1", HTTP_HX_REQUEST="true")
