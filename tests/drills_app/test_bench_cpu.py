"""`bench http`'s CPU accounting (drills_app/bench/cpu.py) and the /proc readers it shares
with the soak (drills_app/procfs.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from django.db import connection

from drills_app import procfs
from drills_app.bench import cpu

pytestmark = pytest.mark.skipif(not procfs.PROC.is_dir(), reason="reads Linux's /proc")


def _busy(seconds: float) -> None:
    deadline = time.process_time() + seconds
    while time.process_time() < deadline:
        pass


@pytest.mark.django_db  # on PostgreSQL it asks which backends serve this database
def test_a_process_tree_and_the_cpu_its_members_spend_inside_the_block():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in procfs.descendants(os.getpid())
        assert procfs.rss_kib(child.pid) is not None
        with cpu.cpu_spent(os.getpid()) as spent:
            _busy(0.3)
        assert spent.measured
        assert 0.25 <= spent.web <= 1.5  # this process's 0.3 s; the sleeping child's none
        web_ms, _ = spent.per_request_ms(10)
        assert web_ms == pytest.approx(spent.web * 100)
    finally:
        child.kill()
        child.wait()


def test_a_process_that_is_gone_has_no_figure():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert procfs.cpu_seconds(child.pid) is None
    assert procfs.rss_kib(child.pid) is None


@pytest.mark.django_db
def test_the_database_is_measured_only_when_its_processes_are_on_this_machine(monkeypatch):
    if connection.vendor != "postgresql":
        assert cpu.database_backends() is None  # SQLite runs inside the web workers
        return
    assert cpu.database_backends() is not None
    monkeypatch.setitem(connection.settings_dict, "HOST", "db.example.internal")
    assert cpu.database_backends() is None
