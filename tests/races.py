"""Forced interleavings on PostgreSQL: a write paused at one step of its transaction, in this
thread, while another thread makes a change, so the order is forced, not hoped for."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connections

from reconcile_app.errors import DomainError

PAUSE = 1.5  # seconds: longer than PostgreSQL's deadlock_timeout (1 s)


def paused_race(
    monkeypatch, module: Any, point: str, write: Callable[[], Any], change: Callable[[], Any]
) -> dict[str, Any]:
    """`write()`, pausing just after the first call of `module.point` while another thread
    makes `change`. What each answered (`write`: its value, or a domain refusal's code;
    `change`: its value, or the exception it raised), and whether the change ended only
    after the write went on (`waited`)."""
    reached = threading.Event()
    real = getattr(module, point)
    seen: dict[str, Any] = {}

    def step_then_pause(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if not reached.is_set():
            reached.set()
            time.sleep(PAUSE)
            seen["resumed"] = time.monotonic()
        return result

    monkeypatch.setattr(module, point, step_then_pause)

    def rival() -> None:
        try:
            reached.wait(timeout=30)
            seen["change"] = change()
        except BaseException as exc:  # anything else is the finding
            seen["change"] = f"{type(exc).__name__}: {exc}"
        finally:
            seen["changed"] = time.monotonic()
            connections.close_all()

    thread = threading.Thread(target=rival)
    thread.start()
    try:
        seen["write"] = write()
    except DomainError as exc:
        seen["write"] = exc.code
    finally:
        thread.join(timeout=60)
    seen["waited"] = seen["changed"] > seen["resumed"]
    return seen


def all_at_once(action: Callable[[], str], *, runs: int) -> list[str]:
    """`action` in `runs` threads released together (PostgreSQL): what each returned, or the
    code of the refusal it raised, or any other exception by type and message; sorted."""
    barrier = threading.Barrier(runs)
    seen: list[str] = []

    def run() -> None:
        try:
            barrier.wait(timeout=30)
            seen.append(action())
        except DomainError as exc:
            seen.append(exc.code)
        except Exception as exc:
            seen.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)  # runs that take turns (loads with their release gates)
    return sorted(seen)
