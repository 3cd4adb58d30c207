"""`load_demo` refuses under RECONCILE_PRODUCTION: the demo's people have published passwords."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import Principal

ROOT = Path(__file__).resolve().parents[4]


def test_load_demo_refuses_in_production_and_writes_nothing(db, settings, tmp_path):
    settings.PRODUCTION = True
    settings.VAR_DIR = tmp_path

    with pytest.raises(CommandError, match="RECONCILE_PRODUCTION"):
        call_command("load_demo", stdout=StringIO(), stderr=StringIO())

    assert not User.objects.exists()
    assert not Principal.objects.exists()
    assert list(tmp_path.iterdir()) == []


def test_load_demo_refuses_when_the_environment_says_production(tmp_path):
    env = {
        **os.environ,
        "RECONCILE_PRODUCTION": "1",
        "RECONCILE_DEBUG": "0",
        "RECONCILE_SECRET_KEY": secrets.token_urlsafe(50),
        "RECONCILE_VAR_DIR": str(tmp_path),
    }
    env.pop("DATABASE_URL", None)

    result = subprocess.run(
        [sys.executable, "manage.py", "load_demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode != 0
    assert "load_demo refuses to run with RECONCILE_PRODUCTION on" in result.stderr
    assert "demo-olivia" not in result.stdout + result.stderr
