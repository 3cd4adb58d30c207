"""An owner's answer is read within the source's timeout and up to a size, whatever it sends.

httpx's timeout is per read of the socket: before, an owner trickling its body a byte at a
time held a reconcile (and the web worker) until the server killed it (a 500), and one
sending a body of gigabytes was read whole into memory. The status line and headers were
still read a byte at a time without end: a commit to an owner trickling them held the agent's
request until the web server killed its worker (a 500, the effect left `sent`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.sources import ApplyOutcome, adapter_for
from reconcile_app.sources.owner_client import OWNER_ANSWER_BYTES_MOST
from tests.factories import ACCOUNT, load_yaml
from tests.reconcile_app.sources.test_http import http_files
from tests.reconcile_app.sources.test_http_guards import COMMAND, FIELD


class _Misbehaving(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    how = "trickle"

    def _misbehave(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.how == "trickle_head":
            self._trickle_head()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        size = 10_000 if self.how == "trickle" else OWNER_ANSWER_BYTES_MOST + 1024
        self.send_header("Content-Length", str(size))
        self.end_headers()
        try:
            if self.how == "trickle":
                for _ in range(size):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            else:
                chunk = b" " * 65536
                for _ in range(size // len(chunk) + 1):
                    self.wfile.write(chunk)
        except OSError:
            pass  # the client gave up, as it should

    def _trickle_head(self) -> None:
        # A receipt that would pass, its status line and headers sent a byte every 0.1 s (6 s
        # in all, a timeout of 0.5 s): every read of the socket finds a byte well in time.
        body = b"{}"
        head = (
            b"HTTP/1.1 201 Created\r\nX-Pad: " + b"a" * 20 + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n"
        )
        try:
            for byte in head[:60]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.1)
            self.wfile.write(head[60:] + body)
        except OSError:
            pass  # the client gave up, as it should
        self.close_connection = True

    do_GET = do_POST = _misbehave

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def misbehaving(db, tmp_path) -> Iterator[type[_Misbehaving]]:
    handler = type("Handler", (_Misbehaving,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    load_yaml(tmp_path, http_files(f"http://127.0.0.1:{server.server_address[1]}/", timeout_ms=500))
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def _adapter():
    return adapter_for(Source.objects.get(name="case-service-http"))


def test_a_trickled_record_times_out_within_the_sources_timeout(misbehaving):
    misbehaving.how = "trickle"
    started = time.monotonic()

    result = _adapter().read(ACCOUNT, FIELD)

    assert result.status == ReadStatus.TIMEOUT
    assert time.monotonic() - started < 3  # 0.5 s a try, a dropped GET asked twice at most


def test_a_trickled_receipt_is_unknown_within_the_sources_timeout(misbehaving):
    misbehaving.how = "trickle"
    started = time.monotonic()

    result = _adapter().apply(COMMAND)

    assert result.outcome == ApplyOutcome.UNKNOWN
    assert time.monotonic() - started < 3


def test_a_record_whose_headers_trickle_times_out_within_the_sources_timeout(misbehaving):
    misbehaving.how = "trickle_head"
    started = time.monotonic()

    result = _adapter().read(ACCOUNT, FIELD)

    assert result.status == ReadStatus.TIMEOUT
    assert time.monotonic() - started < 3  # before: 6 s a try, and asked twice


def test_a_receipt_whose_headers_trickle_is_unknown_within_the_sources_timeout(misbehaving):
    misbehaving.how = "trickle_head"
    started = time.monotonic()

    result = _adapter().apply(COMMAND)

    assert result.outcome == ApplyOutcome.UNKNOWN
    assert time.monotonic() - started < 3  # before: 6 s, however long the owner went on


def test_a_huge_record_is_unavailable_not_read_whole(misbehaving):
    misbehaving.how = "huge"

    result = _adapter().read(ACCOUNT, FIELD)

    assert result.status == ReadStatus.UNAVAILABLE
    assert "over" in result.detail


def test_a_huge_receipt_is_unknown(misbehaving):
    misbehaving.how = "huge"

    result = _adapter().apply(COMMAND)

    assert result.outcome == ApplyOutcome.UNKNOWN
