"""The `http` adapter sends a bearer token only from a variable under the deployer's prefix.

The loader refuses other names (tests/reconcile_app/services/test_contracts.py); a row loaded
before the prefix existed, or before it changed, is refused again at use: no request goes
out, so neither the secret nor a token-less request reaches the base_url.
"""

from __future__ import annotations

import pytest

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.sources import (
    ApplyOutcome,
    EffectCommand,
    LookupOutcome,
    adapter_for,
)
from tests.factories import ACCOUNT, load_yaml
from tests.reconcile_app.sources.test_http import (
    TOKEN_ENV,
    http_files,
    reconcile_through_http,
    record,
)

SECRET = "the-deployment-secret-key-never-leaves"


@pytest.fixture
def http_source(db, tmp_path, stub_owner) -> Source:
    load_yaml(tmp_path, http_files(stub_owner.url))
    return Source.objects.get(name="case-service-http")


@pytest.fixture
def loaded_before_the_prefix(http_source, monkeypatch) -> Source:
    """A row naming a deployment secret, as a file loaded before the fence could have."""
    monkeypatch.setenv("RECONCILE_SECRET_KEY", SECRET)
    http_source.options = {**http_source.options, "auth_token_env": "RECONCILE_SECRET_KEY"}
    http_source.save(update_fields=["options"])
    return http_source


@pytest.fixture
def http_agent(db):
    from tests.conftest import make_agent

    return make_agent("http-agent", ["http-check:retain_manual_review"])


def test_a_permitted_token_is_sent_as_the_bearer(http_source, stub_owner, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "owner-token")
    stub_owner.body = record()

    result = adapter_for(http_source).read(ACCOUNT, "collections_status")

    assert result.status == ReadStatus.OK
    assert stub_owner.requests[0].headers["Authorization"] == "Bearer owner-token"


def test_a_token_variable_outside_the_prefix_is_never_read_nor_sent(
    loaded_before_the_prefix, stub_owner, http_agent
):
    stub_owner.body = record()

    body = reconcile_through_http(http_agent)

    field = body["fields"]["collections_status"]
    assert (field["status"], field["value"]) == ("unavailable", None)
    assert "RECONCILE_SOURCE_TOKEN_" in field["detail"]
    assert SECRET not in str(body)
    assert body["decision"]["result"] == "refuse"
    assert stub_owner.requests == []


def test_every_owner_call_is_refused_before_sending(loaded_before_the_prefix, stub_owner):
    adapter = adapter_for(loaded_before_the_prefix)
    command = EffectCommand(
        idempotency_key="k-1",
        subject=ACCOUNT,
        field="collections_status",
        action="retain_manual_review",
        resulting_value="manual_review",
        expected_version=9,
    )

    authority = adapter.authority("baseline.math-eval")
    applied = adapter.apply(command)
    lookup = adapter.lookup_effect("k-1")
    events = adapter.events(ACCOUNT)

    assert authority.status == ReadStatus.UNAVAILABLE
    assert (applied.outcome, applied.code) == (ApplyOutcome.REJECTED, "owner_unavailable")
    assert "nothing was sent" in applied.detail
    assert lookup.outcome == LookupOutcome.UNAVAILABLE
    assert events.status == ReadStatus.UNAVAILABLE
    assert stub_owner.requests == []


def test_a_prefix_changed_after_loading_applies_at_once(
    http_source, stub_owner, monkeypatch, settings
):
    monkeypatch.setenv(TOKEN_ENV, "owner-token")
    settings.RECONCILE_SOURCE_TOKEN_ENV_PREFIX = "OWNER_TOKENS_"

    result = adapter_for(http_source).read(ACCOUNT, "collections_status")

    assert result.status == ReadStatus.UNAVAILABLE
    assert "OWNER_TOKENS_" in result.detail
    assert stub_owner.requests == []


def test_a_base_url_with_credentials_loaded_before_the_check_is_never_called(
    http_source, stub_owner, monkeypatch, caplog
):
    # The row as a loader without the check kept it: httpx logged each call's URL with the
    # password at INFO, and sent it as Basic auth in place of the source's bearer token.
    monkeypatch.setenv(TOKEN_ENV, "owner-token")
    http_source.base_url = stub_owner.url.replace("http://", "http://reader:pw-in-url@")
    http_source.save(update_fields=["base_url"])
    stub_owner.body = record()
    adapter = adapter_for(http_source)

    with caplog.at_level("DEBUG"):
        read = adapter.read(ACCOUNT, "collections_status")
        applied = adapter.apply(
            EffectCommand("k-2", ACCOUNT, "collections_status", "retain_manual_review", "m", 9)
        )

    assert read.status == ReadStatus.UNAVAILABLE
    assert "credentials" in read.detail
    assert (applied.outcome, applied.code) == (ApplyOutcome.REJECTED, "owner_unavailable")
    assert "nothing was sent" in applied.detail
    assert "pw-in-url" not in read.detail + applied.detail + caplog.text
    assert stub_owner.requests == []
