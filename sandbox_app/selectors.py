"""Reads about the sandbox owner system that are not part of its owner contract."""

from __future__ import annotations

from reconcile_app.models import Source


def sandbox_source_exists(name: str) -> bool:
    """A source the product reads through the sandbox adapter (the sandbox serves only those)."""
    return Source.objects.filter(name=name, adapter="sandbox").exists()
