"""Another transaction creating a lineage node while a writer waits on the node's key."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections, transaction
from django.utils import timezone

from lineage_app.models import Node


@contextmanager
def node_committed_meanwhile(kind: str, ref: str, label: str = "other") -> Iterator[None]:
    """Another transaction inserts the node and holds it uncommitted; it commits half a
    second into the body, while the body's writer is blocked on the node's unique key."""
    holding = threading.Event()
    release = threading.Event()

    def other_writer() -> None:
        try:
            with transaction.atomic():
                Node.objects.create(kind=kind, ref=ref, label=label, recorded_at=timezone.now())
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_writer)
    thread.start()
    assert holding.wait(10)
    threading.Timer(0.5, release.set).start()
    try:
        yield
    finally:
        thread.join(10)
