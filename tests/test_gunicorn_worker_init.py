"""A gunicorn worker, once it has loaded the application (config/gunicorn.py,
`post_worker_init`), has imported its whole URLconf and frozen what start-up built, so the
garbage collector's full collections walk only what requests leave behind."""

from __future__ import annotations

from tests.fresh_interpreter import fresh_python_json

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
    found = fresh_python_json(WORKER)
    assert found["before"] == {"view": False, "frozen": 0}
    assert found["after"]["view"] is True
    # Start-up leaves well over 100,000 objects; after the freeze a full collection sees
    # almost none of them.
    assert found["after"]["frozen"] > 100_000
    assert found["tracked"] < found["after"]["frozen"] / 20
