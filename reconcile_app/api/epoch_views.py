"""Views on the gate's hot path pin the cache epochs for the whole request (authentication
included): one query tells whether the in-process copies of keys, capabilities, contracts,
sources and quarantines are still current (reconcile_app/epochs.py)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponseBase

from reconcile_app.epochs import epochs_pinned


class EpochPinnedMixin:
    # Reads of lists and pages gain nothing from the copies: only the gate's writes pin.
    epoch_pinned_methods = frozenset({"POST"})

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method not in self.epoch_pinned_methods:
            return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]
        with epochs_pinned():
            return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]
