"""gunicorn's own answers, to requests it cannot parse, in problem+json like every other error.

gunicorn refuses some requests before the application sees them (a request line over
`limit_request_line`, 4,094 bytes: 414; a malformed header: 400; too many headers: 431) and
writes an HTML page for each. API.md promises problem+json with a stable `code` and never an
HTML error page. gunicorn has no setting or hook for that page: `Worker.handle_error` chooses
the status and message and hands them to `gunicorn.util.write_error`, its one writer. So
config/gunicorn.py puts `problem_error_write` in that writer's place, in the master before any
worker forks: the status, reason and logging stay gunicorn's (but for REMAPPED), the body
becomes ours.
"""

from __future__ import annotations

import json
import socket

from gunicorn import util

# gunicorn's statuses for what it refuses, each with the `code` clients can rely on.
CODES = {
    400: "malformed_request",
    403: "forbidden",
    414: "request_line_too_long",
    417: "expectation_failed",
    431: "request_headers_too_large",
    500: "internal_error",
}
# gunicorn answers a transfer coding it does not know (`Transfer-Encoding: foo`) 501, as RFC
# 9112 suggests; docs/api.md promises that a request which can never succeed is never a 5xx,
# and gunicorn already answers the codings it knows but refuses (gzip after chunked) 400.
REMAPPED = {501: (400, "Bad Request")}


def problem_error_write(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """`gunicorn.util.write_error`'s signature and effect, with a problem+json body."""
    # Here, not at the top: the gunicorn master loads this file before Django is set up; a
    # worker writes errors only after it has loaded the application.
    from reconcile_app.api.problems import CONTENT_TYPE, problem_body

    status_int, reason = REMAPPED.get(status_int, (status_int, reason))
    code = CODES.get(status_int, "malformed_request" if status_int < 500 else "internal_error")
    detail = mesg or "an unexpected error occurred; it has been logged"
    problem = problem_body(status_code=status_int, code=code, title=reason, detail=detail)
    # ASCII: json escapes whatever of the client's bytes the message quotes.
    body = json.dumps(problem).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        f"Content-Type: {CONTENT_TYPE}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


def install() -> None:
    util.write_error = problem_error_write
