"""The effect page's "Compensate" form: an operator undoes an applied effect through the gate.

A committed compensation redirects to the new effect's page. A refusal answers with the
effect's page, the refusal beside the form and the draft kept, as the page's other forms do;
the console's refused-form middleware (console/refusals.py) sends the browser back to the
page's own URL, so a reload never posts again.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views import View

from reconcile_app.console.forms.effects import EffectCompensateForm
from reconcile_app.console.mixins import OperatorRequiredMixin, form_error, not_found_is_404
from reconcile_app.console.views.effects import effect_refused
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.services.effects import effect_compensate
from reconcile_app.services.principals import principal_acting

COMPENSATE_FIELDS = ("action", "resulting_value", "reason")


class EffectCompensateView(OperatorRequiredMixin, View):
    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        form = EffectCompensateForm(request.POST)
        draft = {name: request.POST.get(name, "") for name in COMPENSATE_FIELDS}
        if not form.is_valid():
            return effect_refused(request, key, "compensate", form_error(form), draft)
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
            return effect_refused(request, key, "compensate", exc, draft)
        compensation = result.effect
        messages.success(
            request,
            f"Compensation {compensation.idempotency_key} committed through the gate for {key}: "
            f"{compensation.status.replace('_', ' ')}.",
        )
        return redirect("console-effect", key=compensation.idempotency_key)
