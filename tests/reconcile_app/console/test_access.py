"""Who may see the console: people in a role; not anonymous visitors, not agents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from tests.reconcile_app.console.conftest import signed_in

PAGES = [
    "/",
    "/snapshots/",
    "/snapshots/snap_unknown/",
    "/contradictions/",
    "/escalations/",
    "/escalations/esc_unknown/",
    "/facts/",
    "/facts/baseline.unknown/",
    "/effects/",
    "/effects/unknown-key/",
    "/effects/unknown-key/status/",
]
LISTS = ["/snapshots/", "/contradictions/", "/escalations/", "/facts/", "/effects/"]
TEMPLATES = Path(__file__).resolve().parents[3] / "templates"


@pytest.mark.parametrize("path", PAGES)
def test_anonymous_visitor_is_sent_to_login(db, path):
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("path", LISTS)
def test_agent_user_is_refused_with_403(agent, path):
    response = signed_in(agent).get(path)
    assert response.status_code == 403
    assert b"Not permitted" in response.content


def test_home_is_the_overview(operator_browser):
    response = operator_browser.get("/")
    assert response.status_code == 200
    assert b'id="card-unknown"' in response.content


@pytest.mark.parametrize("persona", ["operator", "reviewer", "auditor"])
@pytest.mark.parametrize("path", LISTS)
def test_people_in_a_role_see_the_console(request, persona, path):
    response = signed_in(request.getfixturevalue(persona)).get(path)
    assert response.status_code == 200


def test_login_form_signs_in_and_returns_to_the_console(operator):
    client = Client()
    page = client.get("/accounts/login/?next=/contradictions/")
    assert page.status_code == 200
    assert b'name="username"' in page.content and b'name="password"' in page.content
    response = client.post(
        "/accounts/login/",
        {
            "username": operator.user.username,
            "password": "correct-horse-battery",
            "next": "/contradictions/",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/contradictions/"
    assert client.get("/contradictions/").status_code == 200


def test_wrong_password_is_refused_on_the_form(operator):
    response = Client().post(
        "/accounts/login/", {"username": operator.user.username, "password": "nope"}
    )
    assert response.status_code == 200
    assert b'role="alert"' in response.content


def test_logout_is_a_post_form_in_the_header(operator_browser):
    page = operator_browser.get("/snapshots/").content.decode()
    assert re.search(r'<form method="post" action="/accounts/logout/"', page)
    response = operator_browser.post("/accounts/logout/")
    assert response.status_code == 302
    assert operator_browser.get("/snapshots/").status_code == 302


def test_header_shows_navigation_name_and_roles(operator_browser, operator):
    page = operator_browser.get("/snapshots/").content.decode()
    assert 'href="/snapshots/" class="active" aria-current="page">Snapshots</a>' in page
    assert 'href="/contradictions/">Contradictions</a>' in page
    assert 'href="/escalations/">Escalations</a>' in page
    assert 'href="/effects/">Unknown outcomes</a>' in page
    assert 'href="/facts/">Facts</a>' in page
    assert operator.user.username in page
    assert '<span class="role role-operator">operator</span>' in page


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("/escalations/", "Escalations"),
        ("/effects/", "Unknown outcomes"),
        ("/facts/", "Facts"),
    ],
)
def test_each_new_section_is_highlighted_in_the_navigation(operator_browser, path, label):
    page = operator_browser.get(path).content.decode()
    assert f'href="{path}" class="active" aria-current="page">{label}</a>' in page


def test_detail_pages_highlight_their_section(operator_browser, unknown_effect, escalation):
    effect_page = operator_browser.get("/effects/u-1/").content.decode()
    assert 'class="active" aria-current="page">Unknown outcomes</a>' in effect_page
    escalation_page = operator_browser.get(
        f"/escalations/{escalation.escalation_id}/"
    ).content.decode()
    assert 'class="active" aria-current="page">Escalations</a>' in escalation_page
    fact_page = operator_browser.get("/facts/baseline.math-eval/").content.decode()
    assert 'class="active" aria-current="page">Facts</a>' in fact_page


def test_pages_load_only_local_assets(operator_browser, make_snapshot, unknown_effect, escalation):
    snapshot = make_snapshot(claimed="collect")
    for path in [
        "/snapshots/",
        f"/snapshots/{snapshot.snapshot_id}/",
        "/contradictions/",
        "/escalations/",
        f"/escalations/{escalation.escalation_id}/",
        "/facts/",
        "/facts/baseline.math-eval/",
        "/effects/",
        "/effects/u-1/",
    ]:
        page = operator_browser.get(path).content.decode()
        assert "/static/django_htmx/htmx-2.min.js" in page
        assert "/static/reconcile/console.css" in page
        # Nothing a closed network could not serve; and no charting library where no chart is.
        assert not re.search(r'(src|href)="(https?:)?//', page), path
        assert "plotly" not in page


def test_templates_reference_no_external_url():
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text()
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), template
