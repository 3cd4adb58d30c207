"""Loading source files: `auth_token_env` may only name variables under the deployer's prefix.

A source file picks both the variable and the base_url its value is sent to; without the
fence, a file naming RECONCILE_SECRET_KEY or DATABASE_URL would ship that secret to any host.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile_app.errors import ContractFileError
from reconcile_app.models import Source
from reconcile_app.services.contracts import contracts_load
from tests.factories import write_yaml

TOKEN_LINE = 5


def source_file(token_env: str) -> str:
    # Line numbers matter: the loader reports the `auth_token_env` line (TOKEN_LINE).
    return (
        "source: owner-http\n"
        "owner: servicing-team\n"
        "adapter: http\n"
        "base_url: https://owner.example.org/\n"
        f"auth_token_env: {token_env}\n"
        "consistency: linearizable\n"
        "fact_classes: [collections_status]\n"
    )


def load(folder: Path, token_env: str) -> None:
    contracts_load(paths=[str(write_yaml(folder, "owner-http.yaml", source_file(token_env)))])


@pytest.mark.parametrize(
    "token_env",
    ["RECONCILE_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "RECONCILE_SOURCE_TOKEN_"],
)
def test_a_token_variable_outside_the_prefix_is_refused_at_its_line(db, tmp_path, token_env):
    with pytest.raises(ContractFileError) as refused:
        load(tmp_path, token_env)

    assert refused.value.line == TOKEN_LINE
    assert "RECONCILE_SOURCE_TOKEN_" in refused.value.reason
    assert not Source.objects.filter(name="owner-http").exists()


@pytest.mark.parametrize(
    "token_env", ["'not a name'", "'OWNER-TOKEN'", "[RECONCILE_SOURCE_TOKEN_X]"]
)
def test_a_token_variable_that_is_no_variable_name_is_refused(db, tmp_path, token_env):
    with pytest.raises(ContractFileError) as refused:
        load(tmp_path, token_env)

    assert refused.value.line == TOKEN_LINE
    assert "environment variable" in refused.value.reason


def test_a_token_variable_under_the_prefix_is_kept(db, tmp_path):
    load(tmp_path, "RECONCILE_SOURCE_TOKEN_OWNER")

    source = Source.objects.get(name="owner-http")
    assert source.options["auth_token_env"] == "RECONCILE_SOURCE_TOKEN_OWNER"


def test_the_deployer_sets_the_prefix(db, tmp_path, settings):
    settings.RECONCILE_SOURCE_TOKEN_ENV_PREFIX = "OWNER_TOKENS_"

    load(tmp_path, "OWNER_TOKENS_CASE_SERVICE")
    with pytest.raises(ContractFileError, match="OWNER_TOKENS_"):
        load(tmp_path, "RECONCILE_SOURCE_TOKEN_CASE_SERVICE")


@pytest.mark.parametrize("timeout_ms", ["abc", "0", "-5", "true", "1.5", "[1000]"])
def test_a_timeout_that_is_no_positive_whole_number_is_refused_at_its_line(
    db, tmp_path, timeout_ms
):
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "consistency:", f"timeout_ms: {timeout_ms}\nconsistency:"
    )

    with pytest.raises(ContractFileError) as refused:
        contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text))])

    assert refused.value.line == TOKEN_LINE + 1
    assert "timeout_ms" in refused.value.reason
    assert not Source.objects.filter(name="owner-http").exists()


@pytest.mark.parametrize("base_url", ["'http://[::1/'", "'http://owner:port/'"])
def test_a_base_url_that_is_no_url_is_refused_at_its_line(db, tmp_path, base_url):
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "https://owner.example.org/", base_url
    )

    with pytest.raises(ContractFileError) as refused:
        contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text))])

    assert refused.value.line == 4
    assert "not a URL" in refused.value.reason
    assert not Source.objects.filter(name="owner-http").exists()


def test_a_timeout_longer_than_the_owner_tasks_can_wait_is_refused(db, tmp_path, settings):
    settings.RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT = 120
    written = {}
    for timeout_ms in (24_000, 24_001):
        text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
            "consistency:", f"timeout_ms: {timeout_ms}\nconsistency:"
        )
        written[timeout_ms] = str(write_yaml(tmp_path, f"owner-{timeout_ms}.yaml", text))

    contracts_load(paths=[written[24_000]])
    assert Source.objects.get(name="owner-http").options["timeout_ms"] == 24_000
    with pytest.raises(ContractFileError) as refused:
        contracts_load(paths=[written[24_001]])

    assert refused.value.line == TOKEN_LINE + 1
    assert "at most 24000" in refused.value.reason
    assert "RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT" in refused.value.reason
    assert Source.objects.get(name="owner-http").options["timeout_ms"] == 24_000


def test_a_whole_positive_timeout_is_kept(db, tmp_path):
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "consistency:", "timeout_ms: 750\nconsistency:"
    )

    contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text))])

    assert Source.objects.get(name="owner-http").options["timeout_ms"] == 750


@pytest.mark.parametrize(
    "base_url",
    ["https://reader:pw-in-url@owner.example.org/", "https://pw-in-url@owner.example.org/"],
)
def test_a_base_url_with_credentials_is_refused_at_its_line(db, tmp_path, base_url):
    # httpx would log the password with every call's URL and send it in place of the token.
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "https://owner.example.org/", base_url
    )

    with pytest.raises(ContractFileError) as refused:
        contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text))])

    assert refused.value.line == 4
    assert "credentials" in refused.value.reason
    assert "auth_token_env" in refused.value.reason
    assert "pw-in-url" not in refused.value.reason
    assert not Source.objects.filter(name="owner-http").exists()


@pytest.mark.parametrize(
    "base_url", ["'https://owner.example.org/api?v=2'", "'https://owner.example.org/?'"]
)
def test_a_base_url_with_a_query_is_refused_at_its_line(db, tmp_path, base_url):
    # Each call's path goes on the end: after `?v=2` every read, commit and ledger look-up
    # would reach /api, its own path only in the query.
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "https://owner.example.org/", base_url
    )

    with pytest.raises(ContractFileError) as refused:
        contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text))])

    assert refused.value.line == 4
    assert "query" in refused.value.reason
    assert not Source.objects.filter(name="owner-http").exists()
