"""Input serializers whose bound fields are built once per thread, not once per request.

DRF gives every serializer instance its own deep copy of the declared fields
(`Serializer.fields` → `get_fields` → `copy.deepcopy`), so that an instance may change its
fields. The copy re-runs every field's `__init__` and builds its validators again. For the
gate's request body (seven fields, a list of claims with nine more) that copy was 14 % of a
reconcile's CPU in the web worker, more than the validation itself (py-spy on a gunicorn
worker under load, 2026-12-02). Nothing changes these fields after declaration, so they are
built once and reused; validation runs the very same field code as before.

Kept per thread: gunicorn's gthread workers validate concurrently, and DRF's fields are not
made to be shared between threads (a list field may keep per-call state on its child). Kept
per class: each subclass gets its own store. Whenever an instance reads its fields, it
re-points the top-level fields' `parent` at itself, so while it validates, a field's `root`,
`context` and the root's `partial` are its own, as with DRF's copy. A subclass must not add
or change fields per instance (DRF allows it in `__init__`): here that would change them for
every later instance too.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict


class FieldsBuiltOnce(serializers.Serializer):
    _kept: ClassVar[threading.local] = threading.local()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._kept = threading.local()

    @property
    def fields(self) -> BindingDict:  # type: ignore[override]
        fields: BindingDict | None = getattr(self._kept, "fields", None)
        if fields is None:
            fields = BindingDict(self)
            for name, field in self.get_fields().items():
                fields[name] = field  # binds the field to this instance
            self._kept.fields = fields
        else:
            for field in fields.values():
                field.parent = self
        return fields
