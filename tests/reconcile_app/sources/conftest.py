"""A stub owner system over a real socket, for the `http` adapter's tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


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
    """

    def __init__(self) -> None:
        self.status = 200
        self.body: object = {}
        self.post_status = 201
        self.post_body: object = {}
        self.requests: list[ReceivedRequest] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: object) -> None:
                payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
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

            def do_GET(self) -> None:
                self._record()
                self._answer(owner.status, owner.body)

            def do_POST(self) -> None:
                self._record()
                self._answer(owner.post_status, owner.post_body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
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
