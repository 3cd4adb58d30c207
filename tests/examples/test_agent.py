"""examples/agent.py against a live server: run as documented (a subprocess), it recalls,
reconciles, commits, waits and remembers, and a second run is denied; driven in-process, it
reacts to a version change by reconciling again and to an unknown outcome by asking."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from reconcile_client import ReconcileClient, Snapshot

from reconcile_app.models import Effect, Escalation, MemoryRecord
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from sandbox_app.models import SandboxEffect
from sandbox_app.services import sandbox_fault_add, sandbox_record_write
from tests.clients.conftest import (  # noqa: F401 (a fixture)
    FIELD,
    RELEASE,
    Served,
    client_env,
    served,
)
from tests.conftest import COLLECTIONS, Persona, ago

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent.py"
WAREHOUSE = "warehouse-service"
LEDGER = "warehouse-event-ledger"


def pallet(served: Served, subject: str) -> None:
    """Seed 000's warehouse: the pallet moved from bay 4 to bay 9 after the agent noted bay 4."""
    sandbox_record_write(
        source=WAREHOUSE,
        subject=subject,
        field="pallet_bay",
        value="bay 9",
        version=318,
        valid_from=ago(hours=2),
    )
    put_away = evidence_append(
        kind="observation",
        subject=subject,
        field="pallet_bay",
        value="bay 4",
        source=LEDGER,
        observed_at=ago(hours=26),
    )
    evidence_append(
        kind="observation",
        subject=subject,
        field="pallet_bay",
        value="bay 9",
        source=LEDGER,
        observed_at=ago(hours=2),
        note=f"moved {subject} from bay 4 to bay 9",
    )
    memory_admit(
        agent=served.agent.principal,
        memory_class="episodic",
        subject=subject,
        purpose="fulfilment",
        field="pallet_bay",
        value="bay 4",
        derived_from=[put_away.evidence_id],
        written_at=ago(hours=24),
    )


def run_example(served: Served, *subjects: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--pause", "0", "--wait", "5", *subjects],
        env=client_env(served),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_example_agent_picks_once_then_is_denied(served: Served) -> None:
    pallet(served, "P17")
    first = run_example(served, "P17")
    assert first[0] == "P17: recalled 1 memory"
    assert first[1] == "P17: memory 'bay 4' is superseded (state: 'bay 9')"
    assert first[2].startswith("P17: remembered 'bay 9'")  # relearnt from the owner's read
    assert "P17: decision allow (allowed)" in first
    assert "P17: effect verified" in first
    assert first[-1] == "P17: verified"
    current = MemoryRecord.objects.filter(subject="P17", status="current")
    assert list(current.values_list("value", flat=True)) == ["picked"]

    second = run_example(served, "P17")
    assert "P17: memory 'picked' is confirmed (state: 'picked')" in second
    assert "P17: decision deny (already_picked)" in second
    assert second[-1] == "P17: denied"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def example_task(example: ModuleType) -> Any:
    return example.Task(
        decision_class="warehouse-pick",
        purpose="fulfilment",
        action="pick_pallet",
        field="pallet_bay",
        value="picked",
        memory_class="episodic",
    )


def acted(
    client: ReconcileClient, example: ModuleType, subject: str, **options: Any
) -> tuple[str, list[str]]:
    """How the example agent, through `client`, ended `subject`, and what it said."""
    said: list[str] = []
    with client:
        agent = example.Agent(
            client, example_task(example), say=said.append, **{"pause_seconds": 0, **options}
        )
        outcome = agent.run([subject])[subject]
    return outcome, said


class MovingOwner(ReconcileClient):
    """Before the first commit, someone moves the pallet (and the ledger records it)."""

    moved = False

    def commit(self, snapshot: Snapshot | str, **kwargs: Any) -> Any:
        if not self.moved:
            self.moved = True
            sandbox_record_write(source=WAREHOUSE, subject="P18", field="pallet_bay", value="bay 2")
            evidence_append(
                kind="observation",
                subject="P18",
                field="pallet_bay",
                value="bay 2",
                source=LEDGER,
                observed_at=ago(seconds=1),
            )
        return super().commit(snapshot, **kwargs)


@pytest.fixture
def example() -> ModuleType:
    return load_example()


def test_the_example_agent_reconciles_again_after_a_version_change(
    served: Served, example: ModuleType
) -> None:
    pallet(served, "P18")
    outcome, said = acted(MovingOwner(served.url, served.agent.key), example, "P18")
    assert outcome == "verified"
    assert "P18: version_changed: what the snapshot read no longer holds" in said
    assert said.count("P18: decision allow (allowed)") == 2


def test_the_example_agent_asks_about_an_unknown_outcome(
    served: Served, example: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reconcile_app import tasks

    monkeypatch.setattr(tasks.effect_resolve_task, "delay", lambda effect_id: None)
    pallet(served, "P19")
    sandbox_fault_add(source=WAREHOUSE, kind="timeout_after_commit", count=1)
    outcome, said = acted(served.client(), example, "P19", wait_seconds=0.5)
    assert outcome == "unknown"
    assert "P19: the owner did not answer: asking, never re-sending" in said
    assert said[-1].startswith("P19: still unknown; operators resolve ")


class UnreachableOwner(ReconcileClient):
    """The owner is unreachable for the first commit only (after the read it was asked)."""

    down = False

    def commit(self, snapshot: Snapshot | str, **kwargs: Any) -> Any:
        if not self.down:
            self.down = True
            sandbox_fault_add(source=WAREHOUSE, kind="unavailable", count=1)
        return super().commit(snapshot, **kwargs)


def test_the_example_agent_sends_a_command_the_owner_never_took_again_under_its_key(
    served: Served, example: ModuleType
) -> None:
    """docs/api.md: after 503 owner_unavailable a retry with the same key is a new attempt;
    a new key for the same command is what an agent must not learn."""
    pallet(served, "P20")
    outcome, said = acted(UnreachableOwner(served.url, served.agent.key), example, "P20")
    assert outcome == "verified"
    assert said.count("P20: decision allow (allowed)") == 1  # no second decision
    (effect,) = Effect.objects.filter(subject="P20")
    assert effect.status == "verified"
    assert any(
        line.startswith(f"P20: owner_unavailable; the same command under {effect.idempotency_key}")
        for line in said
    )


def throttle_once(monkeypatch: pytest.MonkeyPatch, method: str, path: str) -> list[str | None]:
    """The live server's own throttle refuses the first `method path` (429, Retry-After):
    the Idempotency-Key it carried, if any, is recorded."""
    from reconcile_app import security

    real = security.PrincipalRateThrottle.allow_request
    refused: list[str | None] = []

    def first_refused(self: Any, request: Any, view: Any) -> bool:
        if (request.method, request.path) == (method, path) and not refused:
            refused.append(request.headers.get("Idempotency-Key"))
            self.retry_in = 0.1
            return False
        return real(self, request, view)

    monkeypatch.setattr(security.PrincipalRateThrottle, "allow_request", first_refused)
    return refused


def test_a_throttled_first_commit_goes_again_under_its_key(
    served: Served, example: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 to a commit: nothing was taken. The agent used to stop ("stopped: 429"); it
    waits as told and sends the same command under the same key (no second decision)."""
    refused = throttle_once(monkeypatch, "POST", "/api/v1/effects")
    pallet(served, "P21")
    outcome, said = acted(served.client(), example, "P21")
    assert outcome == "verified"
    (effect,) = Effect.objects.filter(subject="P21")
    assert refused == [effect.idempotency_key]
    assert said.count("P21: decision allow (allowed)") == 1
    # Retry-After is whole seconds: the 0.1 s the throttle asked is sent as 1.
    assert f"P21: throttled; the same command under {effect.idempotency_key} in 1 s" in said


def test_a_throttled_reconcile_is_asked_again(
    served: Served, example: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = throttle_once(monkeypatch, "POST", "/api/v1/reconcile")
    pallet(served, "P22")
    outcome, said = acted(served.client(), example, "P22")
    assert outcome == "verified"
    assert refused == [None]
    assert "P22: throttled; deciding again in 1 s" in said  # Retry-After: whole seconds


def test_a_commit_that_never_arrived_goes_again_under_its_key(
    served: Served, example: ModuleType
) -> None:
    """Every attempt of the first commit fails to connect: nothing was sent (the client's
    TransportError says so, with the key), so the same command goes again under the same key.
    The agent used to stop."""
    lost: list[str] = []

    class RefusedFirstCommits(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.method == "POST" and request.url.path == "/api/v1/effects" and len(lost) < 2:
                lost.append(request.headers["Idempotency-Key"])
                raise httpx.ConnectError("connection refused", request=request)
            return super().handle_request(request)

    pallet(served, "P23")
    with httpx.Client(
        base_url=served.url,
        headers={"Authorization": f"Bearer {served.agent.key}"},
        transport=RefusedFirstCommits(),
    ) as http:
        rc = ReconcileClient(served.url, served.agent.key, http_client=http, commit_attempts=2)
        outcome, said = acted(rc, example, "P23")
    assert outcome == "verified"
    (effect,) = Effect.objects.filter(subject="P23")
    assert lost == [effect.idempotency_key] * 2  # both lost attempts under the one key
    assert said.count("P23: decision allow (allowed)") == 1
    assert f"P23: nothing under {effect.idempotency_key}: it never arrived" in said
    executions = SandboxEffect.objects.filter(
        source=WAREHOUSE, idempotency_key=effect.idempotency_key
    )
    assert executions.count() == 1


def test_the_example_agent_commits_once_a_reviewer_has_approved(
    served: Served, example: ModuleType, reviewer: Persona
) -> None:
    """An open complaint escalates: the first run stops with the escalation's id. Run again
    after a reviewer approved it, the new snapshot joins the approved escalation and lists
    the action; the agent used to answer "a reviewer decides" again and never commit."""
    served.account("account-31")
    served.owner_writes("open", subject="account-31", field="complaint_status")
    task = example.Task(
        decision_class=COLLECTIONS,
        purpose="collections",
        action=RELEASE,
        field=FIELD,
        value="released",
        memory_class="episodic",
    )

    def run() -> tuple[str, list[str]]:
        said: list[str] = []
        with served.client() as client:
            agent = example.Agent(client, task, say=said.append, pause_seconds=0)
            return agent.run(["account-31"])["account-31"], said

    outcome, said = run()
    assert outcome == "escalated"
    assert not Effect.objects.filter(subject="account-31").exists()
    (escalation_id,) = Escalation.objects.filter(status="open").values_list(
        "escalation_id", flat=True
    )
    approved = reviewer.post(
        f"/api/v1/escalations/{escalation_id}/approve", {"rationale": "not about collections"}
    )
    assert approved.status_code == 200, approved.content

    outcome, said = run()
    assert f"account-31: escalation {escalation_id} approved" in said
    assert outcome == "verified"
    (effect,) = Effect.objects.filter(subject="account-31")
    assert effect.escalation is not None
    assert effect.escalation.escalation_id == escalation_id
    assert effect.approved_by == reviewer.name


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [("--key", "rk_clé", "--key"), ("--url", "http://[::1", "--url")],
    ids=["key-no-header-can-carry", "url-that-does-not-parse"],
)
def test_a_key_or_url_the_client_refuses_is_a_usage_error(
    option: str, value: str, named: str
) -> None:
    """The client refuses a key no HTTP header can carry with a ValueError at construction
    (clients/python/README.md), as httpx refuses a URL that does not parse: the example let
    both out as a traceback."""
    env = {"PATH": "", "RECONCILE_URL": "http://127.0.0.1:9", "RECONCILE_API_KEY": "rk_x"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), option, value, "P17"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"error: {named}" in done.stderr
    assert value not in done.stderr or option == "--url"  # a key is never repeated
