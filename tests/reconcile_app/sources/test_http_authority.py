"""The owner contract's authority, now and as of a past time, through the `http` adapter.

Against the sandbox served by a live server (an owner that keeps authority history), and
against stub owners that keep none: only an answer that echoes the time asked is history.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.sources import (
    AuthorityResult,
    ReadResult,
    SourceAdapter,
    adapter_for,
    authority_asked,
)
from sandbox_app.models import SandboxAuthorityChange
from sandbox_app.services import sandbox_authority_write
from tests.factories import load_yaml

TOKEN_ENV = "RECONCILE_SOURCE_TOKEN_TEST_QUOTA_REGISTRY"
KEY = "quota.cluster-a"


def quota_registry(base_url: str) -> dict[str, str]:
    """An http owner answering for the quota keys (no demo source does)."""
    return {
        "quota-registry.yaml": (
            "source: quota-registry\n"
            "owner: capacity-team\n"
            "adapter: http\n"
            f"base_url: {base_url}\n"
            f"auth_token_env: {TOKEN_ENV}\n"
            "consistency: linearizable\n"
            "expected_lag_seconds: 0\n"
            "fact_classes: []\n"
            'fact_keys: ["quota.*"]\n'
        )
    }


def load_registry(tmp_path, base_url: str) -> Source:
    load_yaml(tmp_path, quota_registry(base_url))
    return Source.objects.get(name="quota-registry")


# --- Against the sandbox, over a real socket ---------------------------------------------------


@pytest.fixture
def sandbox_registry(estate, live_server, tmp_path, operator, monkeypatch) -> Source:
    """The sandbox's eval-registry served over HTTP, with the key handed over once."""
    monkeypatch.setenv(TOKEN_ENV, operator.key)  # the sandbox answers operators only
    sandbox_authority_write(
        source="eval-registry", fact_key=KEY, owner="capacity-team", source_revision="cap@r1"
    )
    sandbox_authority_write(
        source="eval-registry", fact_key=KEY, owner="platform-team", source_revision="cap@r2"
    )
    return load_registry(tmp_path, f"{live_server.url}/api/v1/sandbox/eval-registry/")


def handover() -> tuple[datetime, datetime]:
    first, second = SandboxAuthorityChange.objects.filter(fact_key=KEY)
    return first.at, second.at


def test_history_through_http_is_the_sandboxs_own(sandbox_registry):
    first, second = handover()
    adapter = adapter_for(sandbox_registry)
    before = adapter.authority(KEY, as_of=first + (second - first) / 2)
    after = adapter.authority(KEY, as_of=second)
    now = adapter.authority(KEY)
    assert (before.status, before.owner, before.source_revision) == (
        "ok",
        "capacity-team",
        "cap@r1",
    )
    assert not before.no_history and before.as_of == first + (second - first) / 2
    assert (after.owner, after.source_revision) == ("platform-team", "cap@r2")
    assert (now.owner, now.as_of) == ("platform-team", None)


def test_before_any_authority_the_sandbox_had_none_which_is_not_missing_history(
    sandbox_registry,
):
    first, _ = handover()
    answer = adapter_for(sandbox_registry).authority(KEY, as_of=first - timedelta(seconds=1))
    assert answer.status == ReadStatus.UNAVAILABLE
    assert not answer.no_history and answer.none_registered
    assert "registered no authority" in answer.detail


def test_a_key_the_owner_registers_no_authority_for_is_its_answer_not_an_outage(
    sandbox_registry, agent
):
    """The sandbox's 404 `authority_not_found` over HTTP: asking again will not change it, so
    the fact's 503 carries no Retry-After (it did, as for an owner that was down)."""
    answer = adapter_for(sandbox_registry).authority("quota.cluster-z")
    assert (answer.status, answer.none_registered) == (ReadStatus.UNAVAILABLE, True)
    response = agent.get("/api/v1/facts/quota.cluster-z/current")
    assert (response.status_code, response.json()["code"]) == (
        503,
        "current_authority_unavailable",
    )
    assert "Retry-After" not in response
    assert response.json()["authority"]["registered"] is False


@pytest.mark.parametrize(
    ("status", "answer"),
    [(404, {"detail": "no such route"}), (404, b"<html>not found</html>"), (503, {"code": "x"})],
    ids=["404-without-the-code", "404-html", "503"],
)
def test_any_other_failure_is_still_an_outage_to_retry(
    db, tmp_path, stub_owner, agent, status, answer
):
    load_registry(tmp_path, stub_owner.url)
    stub_owner.status, stub_owner.body = status, answer
    response = agent.get(f"/api/v1/facts/{KEY}/current")
    assert response.status_code == 503
    assert "registered" not in response.json()["authority"]
    assert int(response["Retry-After"]) > 0


def test_facts_as_of_through_an_http_owner(sandbox_registry, agent):
    first, second = handover()
    response = agent.get(
        f"/api/v1/facts/{KEY}/current", as_of=rfc3339(first + (second - first) / 2)
    )
    # No record of the key was ever written: the rule answers no_current_record, with the
    # authority as the owner recorded it then.
    assert response.status_code == 404, response.content
    authority = response.json()["authority"]
    assert (authority["owner"], authority["source_revision"]) == ("capacity-team", "cap@r1")
    assert authority["history_kept"] is True


# --- Owners that keep no history ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "answer"),
    [
        (200, {"owner": "platform-team", "source_revision": "cap@r2"}),  # ignores the query
        (404, {"detail": "no such route"}),
        (400, {"detail": "unknown parameter as_of"}),
        (405, {"detail": "method not allowed"}),
        (501, {"detail": "not implemented"}),
        (404, b"<html>not found</html>"),
    ],
    ids=["ignores-as-of", "404", "400", "405", "501", "404-html"],
)
def test_an_owner_that_does_not_echo_as_of_keeps_no_history(
    db, tmp_path, stub_owner, status, answer
):
    stub_owner.status, stub_owner.body = status, answer
    asked = timezone.now() - timedelta(days=7)

    result = adapter_for(load_registry(tmp_path, stub_owner.url)).authority(KEY, as_of=asked)

    assert (result.status, result.no_history, result.owner) == (ReadStatus.UNAVAILABLE, True, "")
    assert "keeps no authority history" in result.detail
    (sent,) = stub_owner.requests
    url = urlsplit(sent.path)
    assert url.path == f"/authority/{KEY}"
    assert parse_qs(url.query) == {"as_of": [rfc3339(asked)]}


def test_an_owner_that_echoes_as_of_answers_history(db, tmp_path, stub_owner):
    asked = timezone.now() - timedelta(days=7)
    stub_owner.body = {
        "owner": "capacity-team",
        "source_revision": "cap@r1",
        "as_of": rfc3339(asked),
    }

    result = adapter_for(load_registry(tmp_path, stub_owner.url)).authority(KEY, as_of=asked)

    assert (result.status, result.owner, result.source_revision) == (
        "ok",
        "capacity-team",
        "cap@r1",
    )
    assert (result.as_of, result.no_history) == (asked, False)


def test_an_owner_answering_for_another_time_is_not_believed(db, tmp_path, stub_owner):
    asked = timezone.now() - timedelta(days=7)
    stub_owner.body = {
        "owner": "platform-team",
        "source_revision": "cap@r2",
        "as_of": rfc3339(timezone.now()),
    }

    result = adapter_for(load_registry(tmp_path, stub_owner.url)).authority(KEY, as_of=asked)

    assert (result.status, result.no_history, result.owner) == (ReadStatus.UNAVAILABLE, False, "")
    assert "answered for" in result.detail


@pytest.mark.parametrize("status", [500, 503])
def test_an_owner_that_fails_is_unavailable_not_historyless(db, tmp_path, stub_owner, status):
    stub_owner.status, stub_owner.body = status, {"detail": "down"}
    result = adapter_for(load_registry(tmp_path, stub_owner.url)).authority(
        KEY, as_of=timezone.now() - timedelta(days=1)
    )
    assert (result.status, result.no_history) == (ReadStatus.UNAVAILABLE, False)


def test_the_present_question_never_carries_as_of(db, tmp_path, stub_owner):
    stub_owner.body = {"owner": "platform-team", "source_revision": "cap@r2"}
    result = adapter_for(load_registry(tmp_path, stub_owner.url)).authority(KEY)
    assert (result.status, result.owner) == ("ok", "platform-team")
    assert stub_owner.requests[0].path == f"/authority/{KEY}"


def test_facts_as_of_with_an_owner_without_history_is_503(db, tmp_path, stub_owner, agent):
    load_registry(tmp_path, stub_owner.url)
    stub_owner.body = {"owner": "platform-team", "source_revision": "cap@r2"}
    asked = rfc3339(timezone.now() - timedelta(days=1))

    response = agent.get(f"/api/v1/facts/{KEY}/current", as_of=asked)

    assert response.status_code == 503, response.content
    body = response.json()
    assert body["code"] == "current_authority_unavailable"
    assert (body["as_of"], body["escalation_id"]) == (asked, None)
    assert body["authority"]["history_kept"] is False
    assert body["authority"]["owner"] == ""  # today's answer is never passed off as then's
    # The present question, to the same owner, is answered.
    assert agent.get(f"/api/v1/facts/{KEY}/current").json()["authority"]["owner"] == (
        "platform-team"
    )


# --- The base adapter's default ----------------------------------------------------------------


class PresentOnlyOwner(SourceAdapter):
    """A deployer's adapter written before the owner contract had `as_of`."""

    def read(self, subject: str, field: str) -> ReadResult:
        return ReadResult.failed(ReadStatus.UNAVAILABLE, "not used")

    def authority(self, fact_key: str) -> AuthorityResult:  # type: ignore[override]
        return AuthorityResult(status="ok", owner="platform-team", source_revision="cap@r2")


PresentOnlyOwner.__abstractmethods__ = frozenset()


def test_an_adapter_without_as_of_keeps_no_history_by_default(db):
    adapter = PresentOnlyOwner(Source(name="present-only"))
    asked = timezone.now() - timedelta(days=1)

    then = authority_asked(adapter, KEY, asked)
    now = authority_asked(adapter, KEY)

    assert (then.status, then.no_history, then.as_of, then.owner) == (
        ReadStatus.UNAVAILABLE,
        True,
        asked,
        "",
    )
    assert (now.status, now.owner) == ("ok", "platform-team")
