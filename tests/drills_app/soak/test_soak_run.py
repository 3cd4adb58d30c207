"""A short soak on the embedded default: real gunicorn, worker and beat, agents, faults.

Brief (a few agents for a quarter of a minute) so it fits in the suite; `manage.py soak`
runs the same for minutes. Every invariant must hold, and the report must say so.
"""

from __future__ import annotations

import io

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from drills_app.soak.report import report_write
from drills_app.soak.run import SoakOptions, soak_run

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite" or not settings.CELERY_BROKER_URL.startswith("filesystem://"),
    reason="the in-suite soak runs on the embedded default (SQLite, filesystem broker)",
)


def test_a_short_soak_of_the_embedded_default_holds_every_invariant(tmp_path, django_db_blocker):
    options = SoakOptions(
        agents=4,
        rate=2.0,
        minutes=0.25,
        web=1,
        workers=1,
        fault_every=2.0,
        drain_seconds=45.0,
        sample_every=5.0,
        warmup_seconds=5.0,
        var_dir=tmp_path / "soak",
    )
    said: list[str] = []
    with django_db_blocker.unblock():
        result = soak_run(options, said.append)
    lines: list[str] = []
    report_write(result, lines.append)
    report = "\n".join(lines)
    assert result.passed, report
    assert sum(result.faults.values()) >= 3, report
    # Agents committed, and every commit the gate recorded was read back.
    accepted = [key for key, record in result.traffic.commits.items() if record.gate_accepted]
    assert accepted, report
    assert "result: PASS" in report
    assert "PASS  no effect duplicated" in report
    # Each process's memory was sampled, several times.
    assert all(
        len(verdict.series.samples) >= 2
        for verdict in result.memory
        if "web" in verdict.series.label
    )
    # The servers are gone, and the scratch estate stayed in its own folder.
    assert not result.servers.processes()
    assert (tmp_path / "soak" / "reconcile.sqlite3").exists()
    assert connection.settings_dict["NAME"] != str(tmp_path / "soak" / "reconcile.sqlite3")


def test_refuses_nonsense_options():
    with pytest.raises(CommandError, match="--agents must be at least 1"):
        call_command("soak", "--agents", "0", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--minutes must be positive"):
        call_command("soak", "--minutes", "0", stdout=io.StringIO())
