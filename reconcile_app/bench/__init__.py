"""Nothing but a forwarding address: the benchmarks live in drills_app.bench.

lineage_app/bench.py still imports `percentiles` and `timed` from `reconcile_app.bench.common`;
its split on the lineage branch (issue 12) stops importing reconcile_app. Once both branches
are merged, delete this package.
"""
