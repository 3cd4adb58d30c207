"""`bench http`: its load generators' reports are read right, and the whole benchmark runs
against real gunicorn and Celery processes (short figures, not a timed test)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from drills_app.bench.load import parse_hey

ROOT = Path(__file__).resolve().parents[2]

HEY_OUTPUT = """
Summary:
  Total:\t20.0213 secs
  Requests/sec:\t49.5470

Latency distribution:
  10%% in 0.0071 secs
  50%% in 0.0093 secs
  99%% in 0.0410 secs

Status code distribution:
  [201]\t990 responses
  [429]\t3 responses

Error distribution:
  [2]\tPost "http://127.0.0.1:8000/api/v1/reconcile": context deadline exceeded
""".replace("%%", "%")


def test_hey_report_gives_percentiles_answers_and_failures():
    result = parse_hey(HEY_OUTPUT)
    assert result.requests == 993
    assert result.p50_ms == pytest.approx(9.3)
    assert result.p99_ms == pytest.approx(41.0)
    assert result.failed == 5  # three 429s and two errors
    assert result.rps == pytest.approx(993 / 20.0213)


@pytest.mark.skipif(
    not (shutil.which("wrk") and shutil.which("hey")),
    reason="needs Debian's wrk and hey (.ci/run installs them)",
)
def test_bench_http_runs_end_to_end(tmp_path):
    env = {
        **os.environ,
        "RECONCILE_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("DATABASE_URL", None)  # the embedded default: the suite's database stays apart
    env.pop("CELERY_BROKER_URL", None)
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "bench",
            "http",
            "--seconds=1",
            "--rounds=2",
            "--commits=12",
            "--agents=4",
            "--agent-seconds=2",
            "--history=10",
            "--past-decisions=20",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    out = completed.stdout
    assert completed.returncode == 0, out + completed.stderr
    lines: dict[str, str] = {}
    for line in out.splitlines():
        if line.count(" ") > 3:  # the throughput table's rows come before the CPU table's
            lines.setdefault(line.split()[0] + " " + line.split()[1], line)
    for row in ("bare DRF", "POST /api/v1/reconcile", "POST /api/v1/effects"):
        figures = lines[row].split()
        assert float(figures[-5]) > 0, out  # requests per second
        assert figures[-1] == "0", out  # nothing failed
    # CPU per request of the web workers (SQLite's cost is in theirs: no database column).
    assert "CPU per request (ms)" in out and "(database: in the web workers)" in out, out
    cpu_rows = re.findall(
        r"^(bare DRF \(validate body\)|POST /api/v1/\w+) +([\d.]+) +-$", out, re.M
    )
    assert [row for row, _ in cpu_rows] == [
        "bare DRF (validate body)",
        "POST /api/v1/reconcile",
        "POST /api/v1/effects",
    ], out
    assert all(float(web_ms) > 0 for _, web_ms in cpu_rows), out
    assert "queries per reconcile: " in out
    # Two rounds of bare then reconcile; the table's rows are the median round's.
    round_ratios = re.findall(
        r"^  round \d: bare [\d.]+ rps, reconcile [\d.]+ rps, ratio ([\d.]+)$", out, re.M
    )
    assert len(round_ratios) == 2, out
    median = re.search(r"^ratio, median of 2 rounds: ([\d.]+) \(round (\d)", out, re.M)
    assert median is not None, out
    assert median.group(1) == min(round_ratios), out  # the lower middle of two
    assert lines["POST /api/v1/reconcile"].split()[-2] == median.group(1), out
    assert "decisions issued before the load: 20)" in out, out
    crowd_requests = {}
    for endpoint in ("reconcile", "bare"):
        crowd = re.search(
            rf"4 agents x 1 request/s for 2 s, {endpoint}: (\d+) requests.*failed (\d+)", out
        )
        assert crowd is not None, out
        assert int(crowd.group(1)) > 0 and crowd.group(2) == "0", out
        crowd_requests[endpoint] = crowd.group(1)
    # The server's own figures for each load: its requests, mean and bucket bounds.
    served = re.findall(
        r"^(bare DRF \(validate body\)|POST /api/v1/\w+|  server side) +(\d+) +([\d.]+) +"
        r"([\d.]+|inf) +([\d.]+|inf)$",
        out,
        re.M,
    )
    assert [row for row, *_ in served] == [
        "bare DRF (validate body)",
        "POST /api/v1/reconcile",
        "  server side",  # the agents on the gate
        "  server side",  # the agents on the bare endpoint
        "POST /api/v1/effects",
    ], out
    assert all(int(count) > 0 and float(mean) > 0 for _, count, mean, _, _ in served), out
    # hey stops counting at its deadline; the server finishes what was in flight then.
    assert int(served[2][1]) >= int(crowd_requests["reconcile"]), out
    concluded, accepted = map(int, re.search(r"readbacks: (\d+) of (\d+) concluded", out).groups())
    assert concluded == accepted > 0, out  # every accepted effect read back
