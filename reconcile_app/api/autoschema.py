"""The project's schema class (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]).

Clients are generated from the schema (docs/openapi.yaml, committed), so component names are
chosen for them: a serializer's `Output` / `Input` suffix is dropped (`SnapshotOutput` is
`Snapshot`, a request body `EffectInput` is `EffectRequest`: drf-spectacular adds `Request`
to request bodies itself). An operation whose view answers whatever the `Accept` header says
(its negotiator's `refuses_unacceptable` is false) is marked, so 406 is not declared on it.
This module imports nothing that resolves DRF's schema class
while being imported: that setting names it.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema

# Read, and removed, by the postprocessing hook (reconcile_app.api.schema).
ANSWERS_ANY_ACCEPT = "x-answers-any-accept"


class ReconcileAutoSchema(AutoSchema):
    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        name = super().get_serializer_name(serializer, direction)
        for suffix in ("Output", "Input"):
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
        return name

    def get_operation(self, *args: Any, **kwargs: Any) -> Any:
        operation = super().get_operation(*args, **kwargs)
        negotiator = getattr(self.view, "content_negotiation_class", None)
        if operation is not None and not getattr(negotiator, "refuses_unacceptable", True):
            operation[ANSWERS_ANY_ACCEPT] = True
        return operation
