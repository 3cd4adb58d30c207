"""The soak's own estate: a scratch database and var directory, the demo, agents, an operator.

The configured engine and broker are used, never the configured data: on SQLite the database
is a file in the scratch var directory; on PostgreSQL a database of its own is created on the
configured server (and dropped afterwards). The servers the soak starts get an environment
that points them there, and this process switches its own connection there too, so what it
creates (agents, an operator) and what it checks at the end are the servers' data.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from reconcile_app.choices import Role
from reconcile_app.demo.estate_loader import ESTATE_DIR
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.principals import principal_create, user_create

DECISION_CLASS = "collections-contact-release"
ACTIONS = ("release_collections_hold", "retain_manual_review")
# Variables that would point the servers at something other than the scratch estate.
DROPPED_VARIABLES = ("RECONCILE_CELERY_EAGER", "RECONCILE_SQLITE_PATH", "DATABASE_URL")


class EstateError(Exception):
    pass


@dataclass(frozen=True)
class Scratch:
    var_dir: Path
    env: dict[str, str]
    database: str
    broker: str
    configured_name: str
    postgres_name: str | None = None


def _postgres_url(name: str) -> str:
    db = connection.settings_dict
    credentials = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or 5432
    return f"postgres://{credentials}@{host}:{port}/{quote(name, safe='')}"


def scratch_prepare(*, var_dir: Path | None, tag: str) -> Scratch:
    """A scratch var directory and database of the configured engine; this process uses it."""
    where = var_dir or Path(tempfile.mkdtemp(prefix=f"reconcile-soak-{tag}-"))
    where.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key not in DROPPED_VARIABLES}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        RECONCILE_VAR_DIR=str(where),
        PYTHONUNBUFFERED="1",
    )
    broker = settings.CELERY_BROKER_URL
    if broker.startswith("filesystem://"):
        # The servers' own folder under the scratch var directory.
        env.pop("CELERY_BROKER_URL", None)
        broker = f"filesystem:// ({where / 'broker'})"
    postgres_name = None
    configured_name = str(connection.settings_dict["NAME"])
    if connection.vendor == "postgresql":
        postgres_name = f"{configured_name}_soak_{tag}"[:63]
        try:
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{postgres_name}"')
        except Exception as exc:
            raise EstateError(
                f"could not create the scratch database {postgres_name}: {exc} "
                "(the soak needs CREATEDB on the configured server)"
            ) from exc
        env["DATABASE_URL"] = _postgres_url(postgres_name)
        database = f"postgresql:{postgres_name}"
        switch_to = postgres_name
    elif connection.vendor == "sqlite":
        switch_to = str(where / "reconcile.sqlite3")
        database = f"sqlite:{switch_to}"
    else:
        raise EstateError(f"the soak runs on SQLite or PostgreSQL, not {connection.vendor}")
    connection.close()
    connection.settings_dict["NAME"] = switch_to
    return Scratch(
        var_dir=where,
        env=env,
        database=database,
        broker=broker,
        configured_name=configured_name,
        postgres_name=postgres_name,
    )


def scratch_drop(scratch: Scratch) -> None:
    """Point this process back at the configured database, and drop a scratch PostgreSQL
    database (SQLite's file stays in the var directory, with the logs)."""
    connection.close()
    connection.settings_dict["NAME"] = scratch.configured_name
    if scratch.postgres_name is None:
        return
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{scratch.postgres_name}" WITH (FORCE)')
    connection.close()


def estate_load() -> None:
    """Migrate the scratch database and load the demo estate's sources, contracts (through
    their release gates) and memory classes, in this process, on the scratch database."""
    call_command("migrate", interactive=False, verbosity=0)
    report = contracts_load(paths=[str(ESTATE_DIR)])
    if report.refused:
        refused = ", ".join(str(item.contract) for item in report.refused)
        raise EstateError(f"the demo estate's contracts did not go live: {refused}")
    connection.close()


@dataclass(frozen=True)
class People:
    operator_token: str
    agent_keys: list[tuple[str, str]]


def people_create(*, agents: int, tag: str) -> People:
    """An operator (faults, subjects, evidence) and `agents` agents with the collections
    contract's two actions."""
    _, token = user_create(username=f"soak-operator-{tag}", roles=[Role.OPERATOR])
    keys = []
    for number in range(1, agents + 1):
        name = f"soak-agent-{tag}-{number}"
        _, key = principal_create(
            name=name, capabilities=[f"{DECISION_CLASS}:{action}" for action in ACTIONS]
        )
        keys.append((name, key))
    connection.close()
    return People(operator_token=token, agent_keys=keys)
