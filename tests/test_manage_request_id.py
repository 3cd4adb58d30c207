"""Each `manage.py` run carries one request id of its own: the audit rows a command writes
(load_contracts' contracts, sources and memory classes; create_user; agent_access) had an
empty one, so an auditor could not find one run's rows together."""

from __future__ import annotations

import runpy
from pathlib import Path

from django.conf import settings

from config.logs import request_id_var

MANAGE = str(Path(settings.BASE_DIR) / "manage.py")


def test_each_run_of_manage_py_has_its_own_request_id(monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(
        "django.core.management.execute_from_command_line",
        lambda argv: seen.append(request_id_var.get()),
    )
    for _ in range(2):
        runpy.run_path(MANAGE)["main"]()

    assert len(seen) == 2 and all(len(found) == 32 for found in seen)
    assert seen[0] != seen[1]
    request_id_var.set("")


def test_a_commands_audit_rows_share_its_runs_id(db, tmp_path):
    from django.core.management import call_command

    from reconcile_app.models import AuditEvent

    request_id_var.set("run-42")
    try:
        call_command(
            "create_user", "ada", "--group", "auditor", "--password-file", _secret(tmp_path)
        )
    finally:
        request_id_var.set("")

    assert AuditEvent.objects.get(action="user.create").request_id == "run-42"


def _secret(tmp_path: Path) -> str:
    path = tmp_path / "password"
    path.write_text("a long enough passphrase 42\n")
    return str(path)
