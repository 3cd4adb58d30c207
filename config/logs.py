"""JSON logs, one line per event, from web processes and workers alike.

Every line carries the time (UTC), level, logger, message, and the request id and principal
of the request (or task) it belongs to, so one request can be followed from the access log
through its audit rows into the Celery tasks it queued. Both come from context variables: set
per request by the middleware (and by API-key authentication), and per task from a message
header the publisher adds (config/celery.py).
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ImproperlyConfigured

request_id_var: ContextVar[str] = ContextVar("request_id", default="")
principal_var: ContextVar[str] = ContextVar("principal", default="")
# The Celery task a line belongs to: the worker's "received" line is written before the task
# (and the request id its message carries) is in hand, so the task id is what joins it to the
# task's own lines and, through them, to the request that queued it.
task_id_var: ContextVar[str] = ContextVar("task_id", default="")


def request_context_clear() -> None:
    """No request in hand: the lines a process writes now belong to no request."""
    request_id_var.set("")
    principal_var.set("")


class ContextFilter(logging.Filter):
    """Adds `request_id`, `principal` and `task_id` to every record (a record's own values
    win; Celery's lines about one task name it in their `data`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", ""):
            record.request_id = request_id_var.get()
        if not getattr(record, "principal", ""):
            record.principal = principal_var.get()
        if not getattr(record, "task_id", ""):
            data = getattr(record, "data", None) if record.name.startswith("celery") else None
            about = data.get("id") if isinstance(data, dict) else None
            record.task_id = task_id_var.get() or (about if isinstance(about, str) else "")
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", ""),
            "principal": getattr(record, "principal", ""),
        }
        if task_id := getattr(record, "task_id", ""):
            entry["task_id"] = task_id  # only in a worker: web lines keep their six fields
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        # One line whatever the message holds: json.dumps escapes newlines.
        return json.dumps(entry, default=str, ensure_ascii=False)


def uncaught_as_json_line() -> None:
    """With JSON logs, an exception nothing catches is one JSON line on standard error.

    What kills a process before Django has configured logging goes to Python's own hook: a
    worker or beat refused at start (`RECONCILE_PRODUCTION` without a secret, a malformed
    variable) printed a plain traceback of some forty lines, which a log store takes for
    forty events, none of them saying which process failed or why at its level.
    """
    if os.environ.get("RECONCILE_LOG_FORMAT", "json").strip().lower() == "text":
        return
    default = sys.excepthook

    def hook(kind: Any, value: Any, traceback: Any) -> None:
        if issubclass(kind, KeyboardInterrupt):
            default(kind, value, traceback)
            return
        record = logging.LogRecord(
            "config.startup",
            logging.CRITICAL,
            "",
            0,
            "process stopped: %s: %s",
            (kind.__name__, value),
            (kind, value, traceback),
        )
        sys.stderr.write(JsonFormatter().format(record) + "\n")
        sys.stderr.flush()

    sys.excepthook = hook


def configure(config: dict[str, Any]) -> None:
    """Django's LOGGING_CONFIG: the dictConfig, and Python's warnings as log records (logger
    `py.warnings`), which would otherwise print plain text to standard error between the JSON
    lines (a worker run as root, a deprecation in a dependency)."""
    logging.config.dictConfig(config)
    logging.captureWarnings(True)


LOG_FORMATS = ("json", "text")


def logging_settings(*, log_format: str, level: str) -> dict[str, Any]:
    """Django's LOGGING: one JSON line per record (`text` for a terminal), at `level`."""
    given, level = level, level.upper()  # "debug" is what people type
    if level not in logging.getLevelNamesMapping():  # WARN and FATAL too, as logging takes
        names = ", ".join(sorted(logging.getLevelNamesMapping()))
        raise ImproperlyConfigured(f"RECONCILE_LOG_LEVEL is {given!r}: one of {names}.")
    # A typo ("txt") would otherwise give JSON lines to someone who asked for a terminal's.
    if log_format.strip().lower() not in LOG_FORMATS:
        raise ImproperlyConfigured(
            f"RECONCILE_LOG_FORMAT is {log_format!r}: one of {', '.join(LOG_FORMATS)}."
        )
    loggers: dict[str, Any] = {
        "django.db.backends": {"level": "INFO"},
        # Celery's pool (billiard) logs on `multiprocessing`, which does not propagate;
        # a logger without a handler of its own gets Celery's plain-text one, and a pool
        # process killed (the OOM killer) was the one plain line in a worker's stream.
        "multiprocessing": {"handlers": ["console"], "propagate": False},
    }
    # httpx logs every request at INFO with its URL, and an owner call's URL names the
    # customer and the field (records/{subject}/{field}, effects/{key}): one line per field
    # read, commit and look-up, in a log store every engineer reads. The snapshot and the
    # effect's timeline keep the same facts, scoped to who may see them (docs/security.md,
    # "Personal data"). Only someone who asks for DEBUG gets those lines.
    if logging.getLevelNamesMapping()[level] > logging.DEBUG:
        loggers["httpx"] = {"level": max(level, "WARNING", key=logging.getLevelName)}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "config.logs.ContextFilter"}},
        "formatters": {
            "json": {"()": "config.logs.JsonFormatter"},
            "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "filters": ["context"],
                "formatter": log_format.strip().lower(),
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": loggers,
    }
