"""A stub owner system over a real socket, for the `http` adapter's tests."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import trustme


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class StubOwner:
    """A tiny owner system whose answer for every GET is `body` (JSON) with `status`.

    POSTs are answered with `post_body` and `post_status` (a receipt, by default empty).
    Every request that arrives is kept in `requests`, so a test can show nothing was sent.
    It keeps connections alive (HTTP/1.1) as real owners' servers do, counts the ones it
    accepted in `connections`, adds `extra_headers` to every answer, drops the next
    `drop_next` requests unanswered, and with `tls` (a trustme certificate) answers over TLS.
    """

    def __init__(self, tls: trustme.LeafCert | None = None) -> None:
        self.status = 200
        self.body: object = {}
        self.post_status = 201
        self.post_body: object = {}
        self.extra_headers: dict[str, str] = {}
        self.drop_next = 0  # requests to answer by closing the connection, as a dying owner
        self.before_answer: Callable[[], object] = lambda: None  # run before each GET's answer
        self.requests: list[ReceivedRequest] = []
        self.connections = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 30  # an idle kept connection's thread ends after this

            def _answer(self, status: int, body: object) -> None:
                payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in owner.extra_headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                owner.requests.append(
                    ReceivedRequest(
                        method=self.command,
                        path=self.path,
                        headers=dict(self.headers.items()),
                        body=self.rfile.read(length) if length else b"",
                    )
                )

            def _dropped(self) -> bool:
                """Close the connection without an answer, while `drop_next` says to."""
                if owner.drop_next <= 0:
                    return False
                owner.drop_next -= 1
                self.close_connection = True
                return True

            def do_GET(self) -> None:
                self._record()
                owner.before_answer()
                if not self._dropped():
                    self._answer(owner.status, owner.body)

            def do_POST(self) -> None:
                self._record()
                if not self._dropped():
                    self._answer(owner.post_status, owner.post_body)

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def get_request(self):  # type: ignore[no-untyped-def]
                accepted = super().get_request()
                owner.connections += 1
                return accepted

        self.server = Server(("127.0.0.1", 0), Handler)
        scheme = "http"
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            tls.configure_cert(context)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}/"
        # A short poll: shutdown() waits for it, once per test.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub_owner() -> Iterator[StubOwner]:
    owner = StubOwner()
    try:
        yield owner
    finally:
        owner.close()
