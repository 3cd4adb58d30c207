"""Replay from the snapshot page: as recorded (must reproduce the hash) or under today's
corrections (what would change, and which corrections it is downstream of)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views import View

from reconcile_app.console.replay_forms import ReplayForm
from reconcile_app.console.views import StaffRequiredMixin
from reconcile_app.errors import DomainError, NotFound
from reconcile_app.selectors.corrections import snapshot_taints
from reconcile_app.selectors.snapshots import snapshot_get
from reconcile_app.services.replay import snapshot_replay

REPLAY_TEMPLATE = "reconcile_app/partials/replay_result.html"


class SnapshotReplayView(StaffRequiredMixin, View):
    """Replay a snapshot as recorded or under today's corrections. Read-only, so any role."""

    def post(self, request: HttpRequest, snapshot_id: str) -> HttpResponse:
        try:
            # The API's read: the console's people see every snapshot.
            snapshot = snapshot_get(user=request.user, snapshot_id=snapshot_id)
        except NotFound as exc:
            raise Http404(exc.detail) from exc
        form = ReplayForm(request.POST)
        context: dict[str, Any] = {"snapshot_id": snapshot_id}
        if not form.is_valid():
            context["error"] = DomainError("Choose how to replay.", code="invalid_mode")
        else:
            mode = form.cleaned_data["mode"]
            try:
                context["result"] = snapshot_replay(snapshot=snapshot, mode=mode)
            except DomainError as exc:
                context["error"] = exc
            if mode == "corrected":
                context["taints"] = snapshot_taints(snapshot_id=snapshot_id)
        if not request.htmx:  # type: ignore[attr-defined]
            result = context.get("result")
            if result is None:
                messages.error(request, context["error"].detail)
            elif result.exact:
                messages.success(
                    request, f"Replay {result.mode.replace('_', ' ')}: exact — hash matches."
                )
            else:
                changed = ", ".join(item["path"] for item in result.differences) or "the hash"
                messages.warning(
                    request, f"Replay {result.mode.replace('_', ' ')} differs: {changed}."
                )
            return redirect(f"{reverse('console-snapshot', args=[snapshot_id])}#replay")
        # htmx swaps only 2xx answers: a refusal is shown in the panel, with a 200.
        return TemplateResponse(request, REPLAY_TEMPLATE, context)
