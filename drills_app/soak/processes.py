"""The soak's servers: gunicorn, Celery workers and beat as real child processes.

Each runs in its own session, so a worker is killed with its pool children in one signal (as
an out-of-memory killer or a lost host would), and nothing is left behind when the soak stops.
Resident memory comes from /proc/<pid>/status (VmRSS), for every process of every server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from drills_app.procfs import descendants, parent_pids

BIN = Path(sys.executable).parent
GUNICORN_CONFIG = Path(__file__).resolve().parents[2] / "config" / "gunicorn.py"
READY_TIMEOUT_SECONDS = 120.0
STOP_GRACE_SECONDS = 20.0


@dataclass
class Server:
    """One server (its main process and whatever it forks) and its log."""

    role: str
    argv: list[str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Servers:
    """gunicorn with `web` workers, `workers` Celery workers, one beat, all on `env`."""

    base_dir: Path
    var_dir: Path
    env: dict[str, str]
    port: int
    web: int
    workers: int
    concurrency: int
    servers: list[Server] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __post_init__(self) -> None:
        logs = self.var_dir / "log"
        logs.mkdir(parents=True, exist_ok=True)
        self.servers.append(
            Server(
                "web",
                [
                    str(BIN / "gunicorn"),
                    # The production settings file (per-worker metrics, access log format).
                    "--config",
                    str(GUNICORN_CONFIG),
                    "config.wsgi",
                    "--workers",
                    str(self.web),
                    "--bind",
                    f"127.0.0.1:{self.port}",
                    "--error-logfile",
                    "-",
                ],
                logs / "web.log",
            )
        )
        for number in range(1, self.workers + 1):
            self.servers.append(
                Server(
                    f"worker-{number}",
                    [
                        str(BIN / "celery"),
                        "-A",
                        "config",
                        "worker",
                        "-l",
                        "info",
                        "--concurrency",
                        str(self.concurrency),
                        "-n",
                        f"soak-{number}@%h",
                    ],
                    logs / f"worker-{number}.log",
                )
            )
        self.servers.append(
            Server(
                "beat",
                [
                    str(BIN / "celery"),
                    "-A",
                    "config",
                    "beat",
                    "-l",
                    "info",
                    "--schedule",
                    str(self.var_dir / "celerybeat-schedule"),
                    "--pidfile",
                    str(self.var_dir / "celerybeat.pid"),
                ],
                logs / "beat.log",
            )
        )

    def start(self) -> None:
        for server in self.servers:
            self._start(server)

    def _start(self, server: Server) -> None:
        with server.log_path.open("ab") as log:
            log.write(f"\n=== {server.role} start {server.starts + 1}\n".encode())
            server.process = subprocess.Popen(  # noqa: S603 (our own executables)
                server.argv,
                cwd=self.base_dir,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server.starts += 1

    def wait_ready(self, timeout: float = READY_TIMEOUT_SECONDS) -> None:
        """Until `/readyz` answers 200: the database, the broker and a worker's heartbeat."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for server in self.servers:
                if not server.alive():
                    raise RuntimeError(
                        f"{server.role} exited while starting; see {server.log_path}"
                    )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return
            time.sleep(1)
        raise RuntimeError(f"the servers were not ready in {timeout:.0f}s; logs in {self.var_dir}")

    def worker(self, number: int) -> Server:
        return next(server for server in self.servers if server.role == f"worker-{number}")

    def kill_worker(self, number: int) -> tuple[int | None, int | None]:
        """SIGKILL a worker with its pool children, then start it again; (old pid, new pid)."""
        server = self.worker(number)
        old = server.pid
        _signal_group(server, signal.SIGKILL)
        if server.process is not None:
            server.process.wait(timeout=10)
        self._start(server)
        return old, server.pid

    def dead(self) -> list[str]:
        return [server.role for server in self.servers if not server.alive()]

    def stop(self) -> None:
        """SIGTERM (warm shutdown) to every server, then SIGKILL what is still there."""
        for server in self.servers:
            _signal_group(server, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for server in self.servers:
            if server.process is None:
                continue
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            # Pool children may outlive their main process: the group goes in any case.
            _signal_group(server, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.process.wait(timeout=5)

    def processes(self) -> list[tuple[str, int]]:
        """(label, pid) of every live process of every server: main processes and children."""
        parents = parent_pids()
        found: list[tuple[str, int]] = []
        for server in self.servers:
            if not server.alive() or server.pid is None:
                continue
            main = "master" if server.role == "web" else "main"
            found.append((f"{server.role} {main}", server.pid))
            child = "worker" if server.role == "web" else "pool"
            for pid in descendants(server.pid, parents):
                found.append((f"{server.role} {child}", pid))
        return found


def _signal_group(server: Server, sig: int) -> None:
    if server.process is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.process.pid, sig)  # start_new_session: the group id is the pid
