"""A source's YAML (`load_contracts`): the owner system a contract's fields are read from."""

from __future__ import annotations

import ipaddress
from typing import Any

import httpx

from reconcile_app.choices import Consistency
from reconcile_app.services.contract_files import ParsedFile
from reconcile_app.services.contract_schema import IDENT, SLUG, refuse_unknown_keys, require_key
from reconcile_app.sources import adapter_class
from reconcile_app.sources.owner_client import (
    CredentialsInBaseURL,
    owner_base,
    owner_timeout_ms_most,
)
from reconcile_app.sources.tokens import token_env_problem

SOURCE_KEYS = {
    "source",
    "owner",
    "adapter",
    "base_url",
    "consistency",
    "expected_lag_seconds",
    "fact_classes",
    "fact_keys",
    "mode",
    "auth_token_env",
    "allow_plaintext_token",
    "timeout_ms",
    "execution_bound_seconds",
    "description",
}
# The longest execution bound a source may publish: a day, past which an unknown outcome is
# for people to settle anyway.
EXECUTION_BOUND_MOST_SECONDS = 86_400


def source_values(parsed: ParsedFile) -> dict[str, Any]:
    data = parsed.data
    refuse_unknown_keys(parsed, data, SOURCE_KEYS)
    name = require_key(parsed, data, "source", str)
    if not SLUG.match(name):
        raise parsed.fail("`source` must be lower-case letters, digits, '-', '_' or '.'", "source")
    owner = require_key(parsed, data, "owner", str)
    adapter = require_key(parsed, data, "adapter", str)
    try:
        adapter_class(adapter)
    except (ImportError, TypeError, ValueError) as exc:
        raise parsed.fail(f"adapter {adapter!r} cannot be used: {exc}", "adapter") from exc
    base_url = data.get("base_url") or ""
    if not isinstance(base_url, str):
        raise parsed.fail("`base_url` must be a string", "base_url")
    if adapter == "http":
        if not base_url.startswith(("http://", "https://")):
            raise parsed.fail("an http source needs an http(s) `base_url`", "base_url")
        try:
            owner_base(base_url)  # parsed as the adapter will parse it
        except CredentialsInBaseURL as exc:
            raise parsed.fail(str(exc), "base_url") from exc
        except httpx.InvalidURL as exc:
            raise parsed.fail(f"`base_url` is not a URL: {exc}", "base_url") from exc
    consistency = require_key(parsed, data, "consistency", str)
    if consistency not in Consistency.values:
        raise parsed.fail(
            f"`consistency` must be one of {', '.join(Consistency.values)}", "consistency"
        )
    lag = data.get("expected_lag_seconds", 0)
    if not isinstance(lag, int) or isinstance(lag, bool) or lag < 0:
        raise parsed.fail(
            "`expected_lag_seconds` must be a non-negative integer", "expected_lag_seconds"
        )
    fact_classes = require_key(parsed, data, "fact_classes", list)
    for index, fact in enumerate(fact_classes):
        if not isinstance(fact, str) or not IDENT.match(fact):
            raise parsed.fail("fact classes must be identifiers", "fact_classes", index)
    mode = data.get("mode", "live")
    if mode not in ("live", "event_sourced"):
        raise parsed.fail("`mode` must be live or event_sourced", "mode")
    fact_keys = data.get("fact_keys") or []
    if not isinstance(fact_keys, list) or not all(isinstance(k, str) and k for k in fact_keys):
        raise parsed.fail("`fact_keys` must be a list of fact key patterns", "fact_keys")
    token_env = data.get("auth_token_env")
    if token_env is not None and (problem := token_env_problem(token_env)):
        raise parsed.fail(problem, "auth_token_env")
    plaintext = data.get("allow_plaintext_token", False)
    if not isinstance(plaintext, bool):
        raise parsed.fail("`allow_plaintext_token` must be true or false", "allow_plaintext_token")
    if adapter == "http" and token_env is not None and not plaintext and _sent_in_clear(base_url):
        raise parsed.fail(
            "an http source with `auth_token_env` needs an https `base_url` (its bearer token "
            "would cross the network in clear text), unless the owner is on this host "
            "(loopback) or `allow_plaintext_token: true` says the network is trusted",
            "base_url",
        )
    timeout_ms = data.get("timeout_ms")
    if timeout_ms is not None and (
        isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0
    ):
        raise parsed.fail(
            "`timeout_ms` must be a positive whole number of milliseconds", "timeout_ms"
        )
    if timeout_ms is not None and timeout_ms > (most := owner_timeout_ms_most()):
        raise parsed.fail(
            f"`timeout_ms` may be at most {most}: readbacks and resolutions ask the owner up to "
            "four times within RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT",
            "timeout_ms",
        )
    bound = data.get("execution_bound_seconds")
    if bound is not None and (
        isinstance(bound, bool)
        or not isinstance(bound, int)
        or not 0 <= bound <= EXECUTION_BOUND_MOST_SECONDS
    ):
        raise parsed.fail(
            "`execution_bound_seconds` must be a whole number of seconds from 0 to "
            f"{EXECUTION_BOUND_MOST_SECONDS}",
            "execution_bound_seconds",
        )
    options = {
        key: data[key]
        for key in (
            "auth_token_env",
            "allow_plaintext_token",
            "timeout_ms",
            "execution_bound_seconds",
        )
        if key in data
    }
    return {
        "name": name,
        "owner": owner,
        "adapter": adapter,
        "base_url": base_url,
        "consistency": consistency,
        "expected_lag_seconds": lag,
        "fact_classes": fact_classes,
        "fact_keys": fact_keys,
        "mode": mode,
        "options": options,
        "document": data,
    }


def _sent_in_clear(base_url: str) -> bool:
    """Whether calls to `base_url` leave this host unencrypted: plain http to any host but a
    loopback address or `localhost`."""
    url = httpx.URL(base_url)
    if url.scheme != "http" or url.host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(url.host).is_loopback
    except ValueError:  # a name: resolved elsewhere, so not known to stay on this host
        return True
