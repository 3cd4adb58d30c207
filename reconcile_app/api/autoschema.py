"""The project's schema class (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]).

Clients are generated from the schema (docs/openapi.yaml, committed), so component names are
chosen for them: a serializer's `Output` / `Input` suffix is dropped (`SnapshotOutput` is
`Snapshot`, a request body `EffectInput` is `EffectRequest`: drf-spectacular adds `Request`
to request bodies itself). This module imports nothing that resolves DRF's schema class
while being imported: that setting names it.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema


class ReconcileAutoSchema(AutoSchema):
    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        name = super().get_serializer_name(serializer, direction)
        for suffix in ("Output", "Input"):
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
        return name
