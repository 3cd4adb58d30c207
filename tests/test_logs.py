"""JSON log lines (config/logs.py): one line each, with time, level, logger, message, and the
request id and principal of the request or task they belong to."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from config.celery import request_id_from_message, request_id_restore, request_id_to_message
from config.logs import (
    ContextFilter,
    JsonFormatter,
    principal_var,
    request_id_var,
    task_id_var,
)
from tests.factories import claim, reconcile_body

FIELDS = {"time", "level", "logger", "message", "request_id", "principal"}


def line(record: logging.LogRecord) -> dict:
    ContextFilter().filter(record)
    text = JsonFormatter().format(record)
    assert "\n" not in text
    return json.loads(text)


def record(message: str, level: int = logging.INFO) -> logging.LogRecord:
    return logging.LogRecord("reconcile.test", level, __file__, 1, message, None, None)


def test_a_line_is_one_json_object_with_every_field():
    token = request_id_var.set("req-1"), principal_var.set("collections-agent")
    try:
        entry = line(record("two\nlines"))
    finally:
        request_id_var.reset(token[0])
        principal_var.reset(token[1])
    assert set(entry) == FIELDS
    assert (entry["level"], entry["logger"], entry["message"]) == (
        "INFO",
        "reconcile.test",
        "two\nlines",
    )
    assert (entry["request_id"], entry["principal"]) == ("req-1", "collections-agent")
    assert entry["time"].endswith("Z") and "T" in entry["time"]


def test_an_exception_is_kept_on_the_same_line():
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failing = logging.LogRecord(
            "reconcile.test", logging.ERROR, __file__, 1, "failed", None, sys.exc_info()
        )
    entry = line(failing)
    assert "ValueError: boom" in entry["exception"] and entry["level"] == "ERROR"


@pytest.fixture(autouse=True)
def fresh_context() -> Iterator[None]:
    """Each test starts outside any request, as a new thread would."""
    tokens = request_id_var.set(""), principal_var.set("")
    yield
    request_id_var.reset(tokens[0])
    principal_var.reset(tokens[1])


@pytest.fixture
def written() -> Iterator[io.StringIO]:
    """What the configured console handler (its filter and formatter) writes, captured."""
    handler = next(
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and isinstance(h.formatter, JsonFormatter)
    )
    stream = io.StringIO()
    previous = handler.setStream(stream)
    yield stream
    handler.setStream(previous)


def emitted(stream: io.StringIO, logger: str) -> list[dict]:
    lines = [json.loads(text) for text in stream.getvalue().splitlines()]
    return [entry for entry in lines if entry["logger"] == logger]


def test_a_request_logs_under_its_id_and_its_agent(agent, estate, written):
    response = agent.client.get("/api/v1/snapshots/snap_missing", HTTP_X_REQUEST_ID="req-log-1")

    assert response.status_code == 404 and response["X-Request-ID"] == "req-log-1"
    entry = emitted(written, "django.request")[-1]
    assert set(entry) == FIELDS and entry["message"].startswith("Not Found")
    assert (entry["request_id"], entry["principal"]) == ("req-log-1", "collections-agent")


@pytest.mark.parametrize("sent", ["req-1\n", "req 1", "x" * 65, "", "réq-1"])
def test_a_request_id_unsafe_to_log_is_replaced_by_a_minted_one(agent, estate, sent):
    # A trailing newline passed the old `^...$` (which `$` allows before a final newline): a
    # forged line in any text log that echoes the id.
    response = agent.client.get("/api/v1/snapshots/snap_missing", HTTP_X_REQUEST_ID=sent)
    assert response["X-Request-ID"] != sent
    assert len(response["X-Request-ID"]) == 32 and response["X-Request-ID"].isalnum()


def test_a_person_is_named_on_the_console(operator, written, db):
    from django.test import Client

    client = Client()
    client.force_login(operator.user)
    client.get("/snapshots/snap_missing/", HTTP_X_REQUEST_ID="req-log-2")
    entry = emitted(written, "django.request")[-1]
    assert (entry["request_id"], entry["principal"]) == ("req-log-2", operator.user.username)
    client.get("/snapshots/snap_other/")  # the next request never logs under the last one's id
    assert emitted(written, "django.request")[-1]["request_id"] not in ("", "req-log-2")


def test_a_request_refused_for_its_host_logs_under_its_own_id(agent, estate, written, settings):
    # Production's HTTPS redirect reads the Host first (SecurityMiddleware).
    settings.SECURE_SSL_REDIRECT = True
    agent.client.get("/api/v1/me", HTTP_X_REQUEST_ID="req-agent", secure=True)
    refused = agent.client.get("/api/v1/me", HTTP_HOST="scanner.evil", HTTP_X_REQUEST_ID="req-x")

    assert (refused.status_code, refused["X-Request-ID"]) == (400, "req-x")
    entry = emitted(written, "django.security.DisallowedHost")[-1]
    # Not the agent's request before it, on this thread.
    assert (entry["request_id"], entry["principal"]) == ("req-x", "")


@pytest.mark.parametrize("carried", [("req-queued", "collections-agent"), None])
def test_a_task_logs_under_the_request_that_queued_it(carried):
    headers: dict = {}
    tokens = request_id_var.set("req-queued"), principal_var.set("collections-agent")
    request_id_to_message(headers=headers)
    request_id_var.reset(tokens[0])
    principal_var.reset(tokens[1])
    assert headers == {"request_id": "req-queued", "principal": "collections-agent"}

    message = dict(zip(("request_id", "principal"), carried, strict=True)) if carried else {}
    task = SimpleNamespace(request=SimpleNamespace(get=message.get, id="task-7"))
    request_id_from_message(task_id="task-7", task=task)
    # Carried: the request's; else the task's own id and no one.
    assert (request_id_var.get(), principal_var.get()) == (carried or ("task-7", ""))
    assert line(record("readback of k-1"))["task_id"] == "task-7"
    request_id_restore(task_id="task-7")
    assert (request_id_var.get(), principal_var.get(), task_id_var.get()) == ("", "", "")
    assert "task_id" not in line(record("a web line"))


def test_the_workers_received_line_names_its_task():
    """Written before the task runs (its message's request id not yet in hand): the task id
    joins it to the task's own lines, which carry the request id."""
    received = logging.LogRecord(
        "celery.worker.strategy",
        logging.INFO,
        __file__,
        1,
        "Task %(name)s[%(id)s] received",
        None,
        None,
    )
    received.args = {"id": "task-7", "name": "reconcile_app.tasks.effect_readback_task"}
    received.data = received.args
    entry = line(received)
    assert (entry["task_id"], entry["request_id"]) == ("task-7", "")
    assert entry["message"] == "Task reconcile_app.tasks.effect_readback_task[task-7] received"


def test_no_line_carries_what_a_request_said_about_a_customer(agent, estate, written, now):
    # Personal data stays in the rows that are scoped to who may read them: a claim's value
    # and note, accepted or refused, are never written to the log (docs/security.md,
    # "Personal data"); the refusal names only the status and the path.
    said = claim("jane.doe@example.com", written_at=now, note="IBAN GB33BUKB20201555555555")
    accepted = agent.post("/api/v1/reconcile", reconcile_body(claims=[said]))
    refused = agent.post("/api/v1/reconcile", reconcile_body(claims=[{**said, "field": "a b"}]))

    assert (accepted.status_code, refused.status_code) == (201, 400)
    logged = written.getvalue()
    assert "Bad Request: /api/v1/reconcile" in logged
    assert "jane.doe" not in logged and "GB33BUKB" not in logged
