"""gunicorn opens no control socket: the product's web processes are managed by signals
(docs/deploy.md), and gunicorn 25's socket, at one path per user by default
(`$XDG_RUNTIME_DIR/gunicorn.ctl` or `~/.gunicorn/gunicorn.ctl`), was taken over by each master
started after another on the host (seen in three deployments' logs on one machine): `gunicornc`
would have stopped or scaled whichever master started last."""

from __future__ import annotations

import time
import urllib.request

from tests.gunicorn_server import gunicorn_serving


def test_a_master_opens_no_control_socket(tmp_path):
    home, runtime = tmp_path / "home", tmp_path / "runtime"
    runtime.mkdir()
    environment = {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    with gunicorn_serving(tmp_path / "var", **environment) as port:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
        time.sleep(1)  # the control server starts in a thread of the master

        assert not (runtime / "gunicorn.ctl").exists()
        assert not (home / ".gunicorn").exists()
