"""Requests gunicorn refuses before the application sees them are answered in problem+json
with a stable code, never gunicorn's HTML page (config/gunicorn_errors.py)."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from tests.gunicorn_server import gunicorn_serving

BASE_DIR = Path(settings.BASE_DIR)
GUNICORN = str(Path(sys.executable).parent / "gunicorn")


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory) -> Iterator[int]:
    """The product's gunicorn, as `./dev serve` starts it, with one worker."""
    with gunicorn_serving(tmp_path_factory.mktemp("var")) as port:
        yield port


def _answer(port: int, raw: bytes) -> bytes:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(raw)
            received = b""
            while chunk := conn.recv(65536):
                received += chunk
            return received
    except OSError:
        return b""


def _problem(answer: bytes) -> tuple[int, str, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers["Content-Type"], json.loads(body)


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (
            b"GET /api/v1/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
            414,
            "request_line_too_long",
        ),
        (
            b"GET /api/v1/snapshots HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n",
            400,
            "malformed_request",
        ),
        (
            b"GET /api/v1/snapshots HTTP/1.1\r\nHost: localhost\r\n"
            + b"".join(b"X-H%d: v\r\n" % n for n in range(120))
            + b"\r\n",
            431,
            "request_headers_too_large",
        ),
        (
            b"GET /api/v1/snapshots HTTP/1.1\r\nHost: localhost\r\nExpect: later\r\n\r\n",
            417,
            "expectation_failed",
        ),
        (
            # A transfer coding gunicorn does not know is the client's making, and sending it
            # again changes nothing: 400, like the codings gunicorn knows but will not stack,
            # never gunicorn's 501 (docs/api.md: such a condition is never a 5xx).
            b"POST /api/v1/reconcile HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: foo\r\n\r\n",
            400,
            "malformed_request",
        ),
    ],
)
def test_a_request_gunicorn_refuses_is_answered_in_problem_json(gunicorn, raw, status, code):
    answer = _answer(gunicorn, raw)
    assert b"<html" not in answer.lower()
    found_status, content_type, problem = _problem(answer)
    assert (found_status, content_type) == (status, "application/problem+json")
    assert problem["code"] == code and problem["status"] == status
    assert problem["type"].endswith(f"/problems/{code}") and problem["detail"]


# What a client can make gunicorn refuse (403 needs the PROXY protocol or TLS, neither
# configured; 500 is gunicorn's own failure, not a request's).
REFUSALS = [
    (400, "malformed_request"),
    (414, "request_line_too_long"),
    (431, "request_headers_too_large"),
    (417, "expectation_failed"),
]


@pytest.mark.parametrize(("status", "code"), REFUSALS)
def test_every_operation_declares_what_gunicorn_refuses(status, code):
    """Any request can be refused so, whatever its operation: the schema lists it for each
    (a live schemathesis run met an undeclared 414 on GET /api/v1/lineage/blast-radius)."""
    from config.gunicorn_errors import CODES
    from tests.openapi_conformance import operations

    assert CODES[status] == code
    undeclared = [
        f"{method} {path}"
        for (method, path), operation in operations().items()
        if code not in operation["responses"].get(str(status), {}).get("x-problem-codes", [])
    ]
    assert undeclared == []
