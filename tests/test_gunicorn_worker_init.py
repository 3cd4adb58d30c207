"""A gunicorn worker, once it has loaded the application (config/gunicorn.py,
`post_worker_init`), has imported its whole URLconf and frozen what start-up built, so the
garbage collector's full collections walk only what requests leave behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from django.conf import settings

WORKER = """
import gc, json, runpy, sys
from config.wsgi import application  # what gunicorn's worker loads before the hook
view = "reconcile_app.api.views.reconcile"
before = {"view": view in sys.modules, "frozen": gc.get_freeze_count()}
runpy.run_path("config/gunicorn.py")["post_worker_init"](None)
after = {"view": view in sys.modules, "frozen": gc.get_freeze_count()}
gc.collect()
print(json.dumps({"before": before, "after": after, "tracked": len(gc.get_objects())}))
"""


def test_a_worker_imports_its_views_and_freezes_what_start_up_built():
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    completed = subprocess.run(
        [sys.executable, "-c", WORKER],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found = json.loads(completed.stdout.strip().splitlines()[-1])
    assert found["before"] == {"view": False, "frozen": 0}
    assert found["after"]["view"] is True
    # Start-up leaves well over 100,000 objects; after the freeze a full collection sees
    # almost none of them.
    assert found["after"]["frozen"] > 100_000
    assert found["tracked"] < found["after"]["frozen"] / 20
