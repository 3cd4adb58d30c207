"""A minimal owner system for `bench owner`, run in its own process so its CPU is not counted
as the adapter's: `python -m drills_app.bench.owner_server PORT [PEM] [--latency-ms N]`
(PEM: key and certificate chain, for TLS; N: a distant owner's delay before each read or
fetch of events).

It speaks just enough of the owner contract (docs/api.md) for the `http` adapter's read,
events and commit: every `GET records/{subject}/{field}` answers one fresh record, every
`GET events?…` one event, every `POST effects` a receipt that echoes the command. It keeps
connections alive (HTTP/1.1) as real owners' servers do, and `GET /connections` answers how
many it has accepted, so the benchmark can show how many connections its calls opened.
Standard library only: no Django here.
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count

# Longer than any keep-alive a client of this benchmark holds, as a real owner's should be.
IDLE_TIMEOUT_SECONDS = 30


class OwnerServer(ThreadingHTTPServer):
    daemon_threads = True
    accepted = count(1)
    connections = 0

    def get_request(self):  # type: ignore[no-untyped-def]
        request = super().get_request()
        self.connections = next(self.accepted)
        return request


class OwnerHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_SECONDS
    # Headers and body leave in two writes: with Nagle's algorithm the second waits for the
    # client's delayed ACK of the first (40 ms), which no real owner's server makes it pay.
    disable_nagle_algorithm = True
    read_latency_seconds = 0.0
    server: OwnerServer

    def _answer(self, status: int, body: object) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        if self.path == "/connections":
            self._answer(200, {"accepted": self.server.connections})
            return
        time.sleep(self.read_latency_seconds)
        now = datetime.now(UTC).isoformat()
        if "/events?" in self.path:  # an event-sourced source's events: one, a missed payment
            event = {"event_id": "e1", "seq": 1, "type": "PaymentMissed", "subject": "acct-1",
                     "valid_from": now, "recorded_at": now}  # fmt: skip
            self._answer(200, {"events": [event], "observed_at": now})
            return
        self._answer(
            200,
            {
                "value": "collect",
                "version": 7,
                "valid_from": now,
                "recorded_at": now,
                "observed_at": now,
            },
        )

    def do_POST(self) -> None:
        command = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self._answer(
            201,
            {
                "idempotency_key": self.headers.get("Idempotency-Key"),
                "subject": command.get("subject"),
                "field": command.get("field"),
                "resulting_version": 8,
            },
        )

    def log_message(self, *args: object) -> None:
        pass


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="owner_server")
    parser.add_argument("port", type=int)
    parser.add_argument("pem", nargs="?", help="key and certificate chain: answer over TLS")
    parser.add_argument(
        "--latency-ms", type=int, default=0, help="wait before answering a read, as a distant owner"
    )
    options = parser.parse_args(argv[1:])
    OwnerHandler.read_latency_seconds = options.latency_ms / 1000
    server = OwnerServer(("127.0.0.1", options.port), OwnerHandler)
    if options.pem:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(options.pem)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv)
