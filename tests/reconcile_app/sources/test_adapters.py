"""Adapters are pluggable: a source file may name any SourceAdapter by dotted path."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management.base import CommandError
from django.utils import timezone

from reconcile_app.errors import ContractFileError
from reconcile_app.models import Source
from reconcile_app.sources import ReadResult, SourceAdapter, adapter_for
from sandbox_app.adapter import SandboxAdapter
from tests.conftest import make_agent
from tests.factories import ACCOUNT, SandboxRecordFactory, load_yaml


class FixedOwner(SourceAdapter):
    """An owner system that always says "collect" at version 7, and remembers who asked."""

    reads: list[tuple[str, str, str]] = []

    def read(self, subject: str, field: str) -> ReadResult:
        FixedOwner.reads.append((self.source.name, subject, field))
        now = timezone.now()
        return ReadResult(
            status="ok",
            value="collect",
            version=7,
            valid_from=now - timedelta(days=1),
            recorded_at=now - timedelta(days=1),
            observed_at=now,
        )


class ExplodingOwner(SourceAdapter):
    """A deployer's adapter with a bug: it raises instead of reporting a status."""

    def read(self, subject: str, field: str) -> ReadResult:
        raise RuntimeError("owner client crashed")


# Only reads are exercised here; the owner contract's other operations (authority, effects,
# events) are not called by reconcile, so these test owners leave them out.
FixedOwner.__abstractmethods__ = frozenset()
ExplodingOwner.__abstractmethods__ = frozenset()

HERE = __name__


def files(adapter: str) -> dict[str, str]:
    return {
        "fixed-owner.yaml": (
            "source: fixed-owner\n"
            "owner: test-team\n"
            f"adapter: {adapter}\n"
            "consistency: batch\n"
            "expected_lag_seconds: 0\n"
            "fact_classes: [collections_status]\n"
        ),
        "fixed-check.yaml": """
decision_class: fixed-check
version: "1"
purpose: collections
required:
  - {field: collections_status, source: fixed-owner, max_age_seconds: 60}
actions:
  retain_manual_review: {field: collections_status}
policy:
  version: "fixed-1"
  allow: [{when: 'fields.collections_status == "collect"', permits: [retain_manual_review]}]
""",
    }


@pytest.fixture
def fixed_agent(db):
    return make_agent("fixed-agent", ["fixed-check:retain_manual_review"])


@pytest.fixture(autouse=True)
def _forget_reads():
    FixedOwner.reads.clear()


def reconcile(persona):
    return persona.post(
        "/api/v1/reconcile",
        {
            "subject": ACCOUNT,
            "purpose": "collections",
            "decision_class": "fixed-check",
            "proposed_action": "retain_manual_review",
        },
    )


def test_adapter_named_by_dotted_path_is_used_for_reads(estate, tmp_path, fixed_agent):
    # The sandbox holds something else: only the plugged-in adapter can say "collect" @ 7.
    SandboxRecordFactory(value="hold", version=42)
    load_yaml(tmp_path, files(f"{HERE}.FixedOwner"))

    response = reconcile(fixed_agent)

    assert response.status_code == 201, response.content
    field = response.json()["fields"]["collections_status"]
    assert (field["source"], field["value"], field["version"], field["status"]) == (
        "fixed-owner",
        "collect",
        7,
        "ok",
    )
    assert field["consistency"] == "batch"
    assert FixedOwner.reads == [("fixed-owner", ACCOUNT, "collections_status")]
    assert response.json()["decision"]["result"] == "allow"
    assert isinstance(adapter_for(Source.objects.get(name="fixed-owner")), FixedOwner)


def test_adapter_registered_by_name_in_settings(db, tmp_path, fixed_agent, settings):
    settings.RECONCILE_ADAPTERS = {**settings.RECONCILE_ADAPTERS, "fixed": f"{HERE}.FixedOwner"}
    load_yaml(tmp_path, files("fixed"))

    response = reconcile(fixed_agent)

    assert response.status_code == 201, response.content
    assert response.json()["fields"]["collections_status"]["version"] == 7
    assert FixedOwner.reads == [("fixed-owner", ACCOUNT, "collections_status")]


def test_built_in_names_resolve_to_the_shipped_adapters(estate):
    assert isinstance(adapter_for(Source.objects.get(name="case-service")), SandboxAdapter)


@pytest.mark.parametrize("adapter", [f"{HERE}.ReadResult", f"{HERE}.Missing", "builtins.dict"])
def test_a_dotted_path_that_is_not_an_adapter_is_refused_at_load(db, tmp_path, adapter):
    with pytest.raises(ContractFileError) as caught:
        load_yaml(tmp_path, files(adapter))
    assert str(caught.value).startswith(f"{tmp_path / 'fixed-owner.yaml'}:3: ")
    assert not Source.objects.exists()


def test_load_contracts_command_reports_a_bad_adapter(db, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "fixed-owner.yaml"
    path.write_text(files("not.a.real.Adapter")["fixed-owner.yaml"])
    with pytest.raises(CommandError, match=":3: "):
        call_command("load_contracts", str(path), stdout=StringIO())


def test_an_adapter_that_raises_fails_closed_instead_of_crashing(db, tmp_path, fixed_agent):
    load_yaml(tmp_path, files(f"{HERE}.ExplodingOwner"))

    response = reconcile(fixed_agent)

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["fields"]["collections_status"]["status"] == "unavailable"
    assert body["fields"]["collections_status"]["value"] is None
    assert body["decision"]["result"] == "refuse"
