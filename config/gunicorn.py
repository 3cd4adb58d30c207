"""gunicorn settings for Reconcile's web processes: `gunicorn -c config/gunicorn.py config.wsgi`
(`./dev up` and `./dev serve` start it so; docs/deploy.md).

Loaded by gunicorn as a file, in the master, before any worker starts or imports Django.
It gives every worker one `PROMETHEUS_MULTIPROC_DIR` (default `$RECONCILE_VAR_DIR/prometheus`)
so that `/metrics` adds up the request histograms of all of them, whichever answers the
scrape (config/http_metrics.py). Its metric files are removed when the master starts: files
left by an earlier run would be counted again. One directory per master: two gunicorns
sharing one would remove each other's.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

from config import gunicorn_errors
from config.logs import request_context_clear

BASE_DIR = Path(__file__).resolve().parent.parent
MULTIPROC_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

_var_dir = Path(os.environ.get("RECONCILE_VAR_DIR") or BASE_DIR / "var")
# Set here, in the master, so that every worker inherits it before it imports
# prometheus_client (which decides at import where metric values live).
os.environ.setdefault(MULTIPROC_DIR_VARIABLE, str(_var_dir / "prometheus"))


# The access log in gunicorn's combined format, plus the time taken and the request id the
# response carries, which ties each line to the application's JSON log lines (config/logs.py).
access_log_format = (
    '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(M)sms '
    "request_id=%({x-request-id}o)s"
)


# No control socket (gunicorn 25+): web processes are managed by signals (docs/deploy.md), and
# its default path is one per user, so each master started on a host took it over from the
# one before and `gunicornc` reached whichever started last.
control_socket_disable = True

# gunicorn's own lines and its access log as JSON objects, like the application's.
logger_class = "config.gunicorn_logs.JsonLogger"

# Requests gunicorn itself refuses are answered in problem+json, not its HTML page.
gunicorn_errors.install()


def multiproc_dir_reset(directory: Path) -> None:
    """No metric files left from an earlier run. Only prometheus_client's own files (`*.db`)
    go: the directory may be a volume mounted for it (it cannot be removed) or hold what
    someone else put there."""
    directory.mkdir(parents=True, exist_ok=True)
    for left in directory.glob("*.db"):
        left.unlink(missing_ok=True)


def on_starting(server: Any) -> None:
    multiproc_dir_reset(Path(os.environ[MULTIPROC_DIR_VARIABLE]))


def post_worker_init(worker: Any) -> None:
    """Import the whole URLconf now (every view, serializer and model), then move what the
    worker has built so far out of the garbage collector's sight (`gc.freeze`).

    A worker holds some 160,000 objects after start-up, and Python's full collection, which
    runs every thousand or so requests, walked them all: 96-132 ms each time in a gunicorn
    worker serving reconciles under wrk (gc callbacks, 2026-12-02, a noisy 2-core machine),
    a pause that every request queued behind it waits out. Frozen, they are never collected
    (they live as long as the worker anyway), and a full collection walks only what requests
    have left behind: 1.4-6.2 ms each in the same run.
    """
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imported for its side effect
    gc.freeze()


def post_request(worker: Any, req: Any, environ: Any, resp: Any) -> None:
    """A request answered (its access line written) leaves no id or principal behind.

    The request's context outlives its middleware on purpose: Django logs a 4xx/5xx and
    gunicorn writes the access line after it returns. But a sync worker's next lines may be
    about no request at all: a request gunicorn refuses before the application sees it
    (a malformed header, a request line too long: scanners' traffic), the worker exiting.
    Those named the request before, and its agent. A response not sent yet (an error about
    to be answered by gunicorn) keeps the context for gunicorn's line about it.
    """
    if resp is not None and resp.headers_sent:
        request_context_clear()


def child_exit(server: Any, worker: Any) -> None:
    # A dead worker's histograms stay counted (they are cumulative); what prometheus_client
    # drops here are live gauges, which must not outlive their process.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
