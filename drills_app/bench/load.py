"""Load from outside the server's processes: Debian's `wrk` for throughput and `hey` for the
many-agents profile. Both are C/Go programs, so the load generator does not compete with the
server for the interpreter (it still shares the machine's cores: figures come with ratios).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

WRK_SCRIPT = """
local function read(path)
  local file = assert(io.open(path, "rb"))
  local text = file:read("*a")
  file:close()
  return text
end

local headers = {["Content-Type"] = "application/json"}
local auth = os.getenv("BENCH_AUTH")
if auth and auth ~= "" then headers["Authorization"] = auth end
local next_thread = 0

function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
end

-- BENCH_BODY: one body sent over and over. BENCH_REQUESTS: one request per line
-- ("<if-match>\\t<idempotency key>\\t<body>"), dealt out to the threads and each sent once;
-- a thread that has sent its share stops.
function init(args)
  queue, position = {}, 0
  local list = os.getenv("BENCH_REQUESTS")
  if list and list ~= "" then
    local threads, index = tonumber(os.getenv("BENCH_THREADS")), 0
    for line in io.lines(list) do
      if index % threads == thread_index then
        local if_match, key, body = line:match("^([^\\t]*)\\t([^\\t]*)\\t(.*)$")
        local these = {}
        for name, value in pairs(headers) do these[name] = value end
        these["If-Match"] = if_match
        these["Idempotency-Key"] = key
        table.insert(queue, wrk.format("POST", nil, these, body))
      end
      index = index + 1
    end
  else
    queue[1] = wrk.format("POST", nil, headers, read(os.getenv("BENCH_BODY")))
  end
end

function request()
  if #queue == 1 then return queue[1] end
  position = position + 1
  if position >= #queue then wrk.thread:stop() end
  return queue[math.min(position, #queue)]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %d, "duration_us": %d, "status_errors": %d, ' ..
    '"socket_errors": %d, "p50_us": %d, "p99_us": %d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


@dataclass(frozen=True)
class LoadResult:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    failed: int  # non-2xx answers and socket errors

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def ratio_to(self, other: LoadResult) -> float:
        """This throughput as a share of `other`'s (the bare endpoint's)."""
        return self.rps / other.rps if other.rps else 0.0


def require(program: str) -> str:
    found = shutil.which(program)
    if not found:
        raise FileNotFoundError(
            f"`{program}` is needed to generate load: apt-get install -y {program}"
        )
    return found


def wrk(
    url: str,
    *,
    workdir: Path,
    seconds: int,
    connections: int,
    threads: int = 2,
    auth: str = "",
    body: str | None = None,
    requests_file: Path | None = None,
) -> LoadResult:
    """Closed-loop load: `connections` clients, each sending its next request on an answer."""
    script = workdir / "bench.lua"
    script.write_text(WRK_SCRIPT)
    env = {"BENCH_AUTH": auth, "BENCH_THREADS": str(threads)}
    if body is not None:
        body_file = workdir / "body.json"
        body_file.write_text(body)
        env["BENCH_BODY"] = str(body_file)
    if requests_file is not None:
        env["BENCH_REQUESTS"] = str(requests_file)
    completed = subprocess.run(  # noqa: S603 - a fixed program and arguments we build
        [
            require("wrk"),
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--timeout",
            "10s",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},
        check=True,
    )
    match = re.search(r"^WRK_JSON (\{.*\})$", completed.stdout, re.MULTILINE)
    if not match:
        raise RuntimeError(f"wrk printed no summary:\n{completed.stdout}\n{completed.stderr}")
    figures = json.loads(match.group(1))
    return LoadResult(
        requests=figures["requests"],
        seconds=figures["duration_us"] / 1e6,
        p50_ms=figures["p50_us"] / 1000,
        p99_ms=figures["p99_us"] / 1000,
        failed=figures["status_errors"] + figures["socket_errors"],
    )


def agents(
    url: str, *, workdir: Path, body: str, auth: str, agents: int, seconds: int
) -> LoadResult:
    """Open-loop load: `agents` clients each sending one request per second, started together."""
    body_file = workdir / "agents-body.json"
    body_file.write_text(body)
    completed = subprocess.run(  # noqa: S603 - a fixed program and arguments we build
        [
            require("hey"),
            "-z",
            f"{seconds}s",
            "-c",
            str(agents),
            "-q",
            "1",
            "-m",
            "POST",
            "-T",
            "application/json",
            "-H",
            f"Authorization: {auth}",
            "-D",
            str(body_file),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return parse_hey(completed.stdout)


def parse_hey(output: str) -> LoadResult:
    def seconds(pattern: str) -> float:
        """A figure in seconds; NaN when hey printed none (no request was answered)."""
        match = re.search(pattern, output)
        return float(match.group(1)) if match else math.nan

    statuses = {
        int(code): int(count)
        for code, count in re.findall(r"\[(\d{3})\]\s+(\d+) responses", output)
    }
    # "Error distribution:" lines: "  [count]\tPost "...": the error"
    errors = sum(int(n) for n in re.findall(r"^\s+\[(\d+)\]\s+(?:Get|Post)\b", output, re.M))
    return LoadResult(
        requests=sum(statuses.values()),
        seconds=seconds(r"Total:\s+([\d.]+) secs"),
        p50_ms=seconds(r"50%+ in ([\d.]+) secs") * 1000,
        p99_ms=seconds(r"99%+ in ([\d.]+) secs") * 1000,
        failed=errors + sum(n for code, n in statuses.items() if code >= 300),
    )
