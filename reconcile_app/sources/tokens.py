"""Which environment variables a source file may name as its owner's bearer token.

A source file chooses both `auth_token_env` and the `base_url` the token is sent to, and
source files are configuration, not secrets: whoever can load one must not be able to ship
RECONCILE_SECRET_KEY or DATABASE_URL to a host of their choosing. Only variables under the
deployer's RECONCILE_SOURCE_TOKEN_ENV_PREFIX may be named; the loader refuses the rest and
the adapters refuse them again at use (rows loaded before the prefix existed or changed).
"""

from __future__ import annotations

import os
import re

from django.conf import settings

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def token_env_prefix() -> str:
    prefix: str = settings.RECONCILE_SOURCE_TOKEN_ENV_PREFIX
    return prefix


def token_env_problem(name: object) -> str | None:
    """Why a source may not name `name` as its token variable, or None when it may."""
    if not isinstance(name, str) or not ENV_NAME.match(name):
        return "`auth_token_env` must be the name of an environment variable"
    prefix = token_env_prefix()
    if not name.startswith(prefix) or name == prefix:
        return (
            f"`auth_token_env` may only name variables starting with {prefix!r} "
            f"(RECONCILE_SOURCE_TOKEN_ENV_PREFIX), not {name!r}"
        )
    return None


def source_token(name: str) -> str | None:
    """The token in the permitted variable `name`, or None when it is unset or empty.

    Call only after token_env_problem(name) is None: this is the one place a source's
    token is read from the environment.
    """
    if token_env_problem(name) is not None:
        return None
    return os.environ.get(name) or None
