"""An owner's answer is read within the source's timeout and up to a size, whatever it sends.

httpx's timeout is per read of the socket: before, an owner trickling its body a byte at a
time held a reconcile (and the web worker) until the server killed it (a 500), and one
sending a body of gigabytes was read whole into memory.
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


def test_a_huge_record_is_unavailable_not_read_whole(misbehaving):
    misbehaving.how = "huge"

    result = _adapter().read(ACCOUNT, FIELD)

    assert result.status == ReadStatus.UNAVAILABLE
    assert "over" in result.detail


def test_a_huge_receipt_is_unknown(misbehaving):
    misbehaving.how = "huge"

    result = _adapter().apply(COMMAND)

    assert result.outcome == ApplyOutcome.UNKNOWN
