"""A source's bearer token never crosses the network in clear text unless a file says so.

An `http` source with `auth_token_env` and an `http://` base_url sent its token in clear
with every owner call (left alone at stop 55). Now the file is refused at load, naming the
way out: https, an owner on this host (loopback), or `allow_plaintext_token: true` for a
network the deployer trusts (a service mesh that encrypts below HTTP).
"""

from __future__ import annotations

import pytest

from reconcile_app.errors import ContractFileError
from reconcile_app.models import Source
from reconcile_app.services.contracts import contracts_load
from tests.factories import write_yaml
from tests.reconcile_app.services.test_contracts import source_file

BASE_LINE = 4


def load(tmp_path, base_url: str, *, token: bool = True, extra: str = "") -> None:
    text = source_file("RECONCILE_SOURCE_TOKEN_OWNER").replace(
        "https://owner.example.org/", base_url
    )
    if not token:
        text = text.replace("auth_token_env: RECONCILE_SOURCE_TOKEN_OWNER\n", "")
    contracts_load(paths=[str(write_yaml(tmp_path, "owner-http.yaml", text + extra))])


@pytest.mark.parametrize(
    "base_url", ["http://owner.example.org/", "http://10.0.0.7:8080/", "http://[fd00::7]/"]
)
def test_a_token_over_plain_http_to_another_host_is_refused_at_the_base_url(db, tmp_path, base_url):
    with pytest.raises(ContractFileError) as refused:
        load(tmp_path, base_url)

    assert refused.value.line == BASE_LINE
    assert "clear text" in refused.value.reason
    assert "allow_plaintext_token" in refused.value.reason
    assert not Source.objects.filter(name="owner-http").exists()


@pytest.mark.parametrize(
    ("base_url", "token", "extra"),
    [
        ("https://owner.example.org/", True, ""),
        ("http://127.0.0.1:8080/", True, ""),
        ("http://[::1]:8080/", True, ""),
        ("http://localhost:8080/", True, ""),
        ("http://owner.example.org/", False, ""),
        ("http://owner.example.org/", True, "allow_plaintext_token: true\n"),
    ],
    ids=["https", "loopback-v4", "loopback-v6", "localhost", "no-token", "said-so"],
)
def test_https_loopback_no_token_or_the_files_word_loads(db, tmp_path, base_url, token, extra):
    load(tmp_path, base_url, token=token, extra=extra)

    source = Source.objects.get(name="owner-http")
    assert source.base_url == base_url
    assert source.options.get("allow_plaintext_token", False) == bool(extra)


def test_allow_plaintext_token_is_true_or_false(db, tmp_path):
    with pytest.raises(ContractFileError) as refused:
        load(tmp_path, "http://owner.example.org/", extra="allow_plaintext_token: 'yes'\n")

    assert "allow_plaintext_token" in refused.value.reason
