"""Who may read lineage is the host's to say: the API's permission classes, the explorer's
access check and the PROV namespace come from settings, and malformed ones are refused."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from lineage_app.choices import Relation
from lineage_app.conf import api_permission_classes, console_access, prov_namespace
from lineage_app.services.graph import Link, graph_record


@pytest.fixture
def small_graph(db):
    graph_record([Link("source:s@1", "read:r-1", Relation.WAS_ATTRIBUTED_TO)])


def test_reconcile_keeps_agents_out_through_the_settings(small_graph, agent):
    response = agent.client.get("/api/v1/lineage/source:s@1/descendants")
    assert (response.status_code, response.json()["code"]) == (403, "people_only")
    browser = Client()
    browser.force_login(agent.user)
    assert browser.get("/lineage/?node=source:s@1").status_code == 403


def test_without_the_settings_lineage_asks_only_for_a_signed_in_caller(
    small_graph, agent, settings
):
    del settings.LINEAGE_API_PERMISSION_CLASSES
    del settings.LINEAGE_CONSOLE_ACCESS
    assert agent.client.get("/api/v1/lineage/source:s@1/descendants").status_code == 200
    browser = Client()
    browser.force_login(agent.user)
    assert browser.get("/lineage/?node=source:s@1").status_code == 200
    assert Client().get("/lineage/").status_code == 302  # to the sign-in page


def test_the_prov_namespace_is_the_hosts(small_graph, operator, settings):
    settings.LINEAGE_PROV_NAMESPACE = ("acme", "https://acme.invalid/prov#")
    document = operator.client.get("/api/v1/lineage/source:s@1/prov").json()
    assert document["prefix"]["acme"] == "https://acme.invalid/prov#"
    assert "acme:source_s%401" in document["agent"]


@pytest.mark.parametrize(
    ("name", "value", "read"),
    [
        ("LINEAGE_API_PERMISSION_CLASSES", "rest_framework.permissions.AllowAny", "api"),
        ("LINEAGE_API_PERMISSION_CLASSES", ["lineage_app.conf.signed_in"], "api"),
        ("LINEAGE_API_PERMISSION_CLASSES", ["no.such.Permission"], "api"),
        ("LINEAGE_CONSOLE_ACCESS", "lineage_app.conf.DEFAULT_CONSOLE_ACCESS", "console"),
        ("LINEAGE_CONSOLE_ACCESS", 42, "console"),
        ("LINEAGE_PROV_NAMESPACE", "rc", "prov"),
        ("LINEAGE_PROV_NAMESPACE", ("rc", ""), "prov"),
    ],
)
def test_malformed_settings_are_refused(settings, name, value, read):
    setattr(settings, name, value)
    reader = {"api": api_permission_classes, "console": console_access, "prov": prov_namespace}
    with pytest.raises(ImproperlyConfigured):
        reader[read]()
