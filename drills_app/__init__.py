"""Tools that exercise the product end to end, kept off its runtime code path.

Seed 000's failure-injection drill and seed 002's drift benchmark (stored as DrillRun rows,
run by Celery from the console's drills page or by `manage.py drill` / `drift_benchmark`),
the history-substitution invariance check, the demo simulator (`simulate`) and the
performance benchmarks (`bench`). They drive reconcile_app's services against the sandbox
owner system (sandbox_app); reconcile_app imports none of this.
"""
