"""What every request of the soak answered, and what each commit's answers said.

Filled by httpx response hooks (every request the agents and the harness put on the wire,
retries inside the client included) and by the agents (which key each commit used, and
whether an answer carried the effect the gate recorded).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Paths grouped into routes, so the counts read per endpoint rather than per subject or key.
ROUTES = (
    (re.compile(r"^/api/v1/effects/[^/]+$"), "GET /api/v1/effects/{key}"),
    (re.compile(r"^/api/v1/sandbox/[^/]+/records/.+$"), "/api/v1/sandbox/{source}/records/…"),
    (re.compile(r"^/api/v1/sandbox/[^/]+/faults$"), "/api/v1/sandbox/{source}/faults"),
)


def route_of(method: str, path: str) -> str:
    for pattern, name in ROUTES:
        if pattern.match(path):
            return name if name.startswith("GET ") else f"{method} {name}"
    return f"{method} {path}"


@dataclass(frozen=True)
class ServerErrorAnswer:
    """One 5xx: when (seconds into the run), where, and the problem code it carried."""

    at: float
    method: str
    path: str
    status: int
    code: str
    detail: str


@dataclass
class CommitRecord:
    """One idempotency key: the subject it wrote, and each answer a send of it got."""

    subject: str
    answers: list[tuple[int | None, str]] = field(default_factory=list)
    # The gate recorded it: some answer carried the effect (2xx, or the owner's rejection).
    gate_accepted: bool = False


@dataclass
class Traffic:
    started: float = field(default_factory=time.monotonic)
    # (who, route, status) → requests
    counts: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    server_errors: list[ServerErrorAnswer] = field(default_factory=list)
    commits: dict[str, CommitRecord] = field(default_factory=dict)
    no_answer: Counter[str] = field(default_factory=Counter)

    def answered(
        self, *, who: str, method: str, path: str, status: int, seconds: float, body: Any
    ) -> None:
        route = route_of(method, path)
        self.counts[(who, route, status)] += 1
        self.latencies.setdefault(route, []).append(seconds)
        if status >= 500:
            problem = body if isinstance(body, dict) else {}
            self.server_errors.append(
                ServerErrorAnswer(
                    at=time.monotonic() - self.started,
                    method=method,
                    path=path,
                    status=status,
                    code=str(problem.get("code", "")),
                    detail=str(problem.get("detail", ""))[:200],
                )
            )

    def unanswered(self, *, method: str, path: str) -> None:
        self.no_answer[route_of(method, path)] += 1

    def commit_sent(self, key: str, subject: str) -> None:
        self.commits.setdefault(key, CommitRecord(subject=subject))

    def commit_answered(
        self, key: str, *, status: int | None, effect_status: str, carried_effect: bool
    ) -> None:
        record = self.commits[key]
        record.answers.append((status, effect_status))
        record.gate_accepted = record.gate_accepted or carried_effect

    def by_status_class(self) -> dict[str, Counter[str]]:
        """who → {"2xx": n, "4xx": n, "5xx": n, ...}"""
        classes: dict[str, Counter[str]] = {}
        for (who, _route, status), count in self.counts.items():
            classes.setdefault(who, Counter())[f"{status // 100}xx"] += count
        return classes

    def by_route(self) -> dict[str, Counter[int]]:
        routes: dict[str, Counter[int]] = {}
        for (_who, route, status), count in self.counts.items():
            routes.setdefault(route, Counter())[status] += count
        return routes

    def total(self) -> int:
        return sum(self.counts.values())
