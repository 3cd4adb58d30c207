"""`bench owner`: owner calls through the `http` adapter over HTTP and TLS, with connections
kept and with a connection per call, against an owner in its own process."""

from __future__ import annotations

import io
import os
import re

from drills_app.bench import owner


def test_the_table_measures_kept_connections_against_one_per_call(settings):
    # Kept longer than any pause a loaded machine puts between two calls.
    settings.RECONCILE_HTTP_KEEPALIVE_SECONDS = configured = 30
    trust_before = os.environ.get("SSL_CERT_FILE")
    out = io.StringIO()

    owner.run(out, calls=5)

    text = out.getvalue()
    assert "kept connections idle out after 30 s" in text
    rows = re.findall(r"^(https?) +(kept|new per call) +(read|commit) .* (\d+)$", text, re.M)
    assert [(scheme, kind, call) for scheme, kind, call, _ in rows] == [
        (scheme, kind, call)
        for scheme in ("http", "https")
        for kind in ("kept", "new per call")
        for call in ("read", "commit")
    ]
    # Kept: the warm-up's one connection serves every measured call; else one per call.
    assert [int(opened) for *_, opened in rows] == [0, 0, 5, 5] * 2
    assert len(re.findall(r"CPU \d+\.\d+x +wall \d+\.\d+x", text)) == 4
    # A reconcile's reads of three distant owners, one after another and at once.
    ways = re.findall(r"^  (one after another|at once) +p50 +(\d+\.\d+) ms", text, re.M)
    assert [way for way, _ in ways] == ["one after another", "at once"]
    # Three reads of an owner answering 10 ms late cannot take less than 30 ms in order.
    assert float(ways[0][1]) >= 30
    # What the benchmark changed to run, it put back.
    assert configured == settings.RECONCILE_HTTP_KEEPALIVE_SECONDS
    assert os.environ.get("SSL_CERT_FILE") == trust_before
