"""Hosts started together each migrate the one PostgreSQL database (`./dev serve` migrates on
every host): they take turns instead of the second failing half-way."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def empty_database(db) -> Iterator[str]:
    if connection.vendor != "postgresql":
        pytest.skip("the lock is PostgreSQL's; SQLite is one machine's file")
    settings = connection.settings_dict
    name = f"reconcile_migrate_{secrets.token_hex(4)}"
    server = f"postgres://{settings['USER']}@{settings['HOST']}:{settings['PORT']}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{server}/{name}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_two_hosts_migrating_one_database_at_once_both_succeed(empty_database, tmp_path):
    env = {**os.environ, "DATABASE_URL": empty_database, "RECONCILE_VAR_DIR": str(tmp_path)}
    hosts = [
        subprocess.Popen(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [host.communicate(timeout=300)[0] for host in hosts]

    assert [host.returncode for host in hosts] == [0, 0], outputs
    # One applied the migrations; the other waited, then found none left.
    assert sorted("No migrations to apply" in output for output in outputs) == [False, True]
