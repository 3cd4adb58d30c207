"""The operator watching a run hears when it ends: the panel is swapped whole (its own live
region with it), so the status answer that finds the run moved on carries a console message,
said in the page's polite live region (static/reconcile/messages.js)."""

from __future__ import annotations

import json

from drills_app.choices import DrillRunKind
from drills_app.runs import drill_run_fail, drill_run_start


def test_a_run_that_failed_is_said_to_the_operator_watching_it(operator_browser):
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1})
    drill_run_fail(run_id=run.pk, error="abandoned: no worker took it within 60 minutes")
    done = operator_browser.get(f"/drills/{run.pk}/status/?since=running&polls=2")
    told = json.loads(done["HX-Trigger"])["console-message"]
    assert told == {
        "level": "error",
        "text": f"Failure-injection drill #{run.pk} failed: abandoned: no worker took it within "
        "60 minutes",
    }
