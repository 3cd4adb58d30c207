"""The effect page's "Compensate" form: an operator undoes an applied effect through the gate.

Post/redirect/get both ways: a committed compensation redirects to the new effect's page; a
refusal is kept in the session for one read and the browser is sent back to the effect's
page, which shows it beside the form. Reloading either page never posts again.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views import View

from reconcile_app.console.forms.effects import EffectCompensateForm
from reconcile_app.console.mixins import OperatorRequiredMixin, form_error, not_found_is_404
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.services.effects import effect_compensate
from reconcile_app.services.principals import principal_acting

REFUSAL_SESSION_KEY = "effect-refusal"
COMPENSATE_FIELDS = ("action", "resulting_value", "reason")


def refusal_stash(
    request: HttpRequest, key: str, form_name: str, error: DomainError, draft: dict[str, str]
) -> HttpResponse:
    """Keep the refusal (and what was typed) for the page's next read, and go there."""
    request.session[REFUSAL_SESSION_KEY] = {
        "key": key,
        "form": form_name,
        "detail": error.detail,
        "code": error.code,
        "status": error.status,
        "draft": draft,
    }
    return redirect("console-effect", key=key)


def refusal_pop(request: HttpRequest, key: str) -> tuple[str, DomainError | None, dict[str, Any]]:
    """The refusal stashed for this effect's page, once: (form name, error, draft)."""
    stashed = request.session.get(REFUSAL_SESSION_KEY)
    if not stashed or stashed.get("key") != key:
        return "", None, {}
    del request.session[REFUSAL_SESSION_KEY]
    error = DomainError(stashed["detail"], code=stashed["code"], status=stashed["status"])
    return stashed["form"], error, stashed["draft"]


class EffectCompensateView(OperatorRequiredMixin, View):
    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        form = EffectCompensateForm(request.POST)
        draft = {name: request.POST.get(name, "") for name in COMPENSATE_FIELDS}
        if not form.is_valid():
            return refusal_stash(request, key, "compensate", form_error(form), draft)
        try:
            with not_found_is_404():
                result = effect_compensate(
                    idempotency_key=key,
                    principal=principal_acting(request.user, None),
                    actor=request.user,
                    request_id=request_id_of(request),
                    **form.cleaned_data,
                )
        except DomainError as exc:
            return refusal_stash(request, key, "compensate", exc, draft)
        compensation = result.effect
        messages.success(
            request,
            f"Compensation {compensation.idempotency_key} committed through the gate for {key}: "
            f"{compensation.status.replace('_', ' ')}.",
        )
        return redirect("console-effect", key=compensation.idempotency_key)
