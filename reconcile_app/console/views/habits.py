"""The console's "go to" box and a person's own API tokens."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views import View

from reconcile_app.console.mixins import StaffRequiredMixin, is_htmx
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.goto import KINDS, goto_resolve
from reconcile_app.selectors.principals import tokens_of
from reconcile_app.services.tokens import token_create, token_revoke

GOTO_MISSING_TEMPLATE = "reconcile_app/goto_missing.html"
TOKENS_TEMPLATE = "reconcile_app/tokens.html"
TOKENS_REGION_TEMPLATE = "reconcile_app/partials/tokens_region.html"
MAX_QUERY_LENGTH = 200


class GotoView(StaffRequiredMixin, View):
    """`/go/?q=<id>`: redirect to the page the id names, or a 404 that says what was tried."""

    def get(self, request: HttpRequest) -> HttpResponse:
        text = request.GET.get("q", "").strip()[:MAX_QUERY_LENGTH]
        target = goto_resolve(user=request.user, text=text)
        if target is not None:
            return redirect(target.url)
        context = {"query": text, "kinds": KINDS}
        return TemplateResponse(request, GOTO_MISSING_TEMPLATE, context, status=404)


def tokens_page(
    request: HttpRequest,
    *,
    status: int = 200,
    new_token: str = "",
    notice: str = "",
    error: DomainError | None = None,
) -> HttpResponse:
    context = {
        "tokens": tokens_of(user=request.user),
        "new_token": new_token,
        "notice": notice,
        "error": error,
    }
    # The new token is shown in the region htmx swaps: the address bar keeps the page's URL.
    template = TOKENS_REGION_TEMPLATE if is_htmx(request) else TOKENS_TEMPLATE
    return TemplateResponse(request, template, context, status=status)


class TokensView(StaffRequiredMixin, View):
    """ "Your API tokens": the person's own keys, and a new one (shown once)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return tokens_page(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        key, token = token_create(user=request.user, request_id=request_id_of(request))
        notice = f"Token {key.prefix} created."
        return tokens_page(request, status=201, new_token=token, notice=notice)


class TokenRevokeView(StaffRequiredMixin, View):
    def post(self, request: HttpRequest, prefix: str) -> HttpResponse:
        reason = request.POST.get("reason", "").strip()[:4000]
        try:
            token_revoke(
                user=request.user, prefix=prefix, reason=reason, request_id=request_id_of(request)
            )
        except DomainError as exc:
            return tokens_page(request, status=exc.status, error=exc)
        notice = f"Token {prefix} revoked: it no longer opens the API."
        if is_htmx(request):
            return tokens_page(request, notice=notice)
        messages.success(request, notice)
        return redirect("console-tokens")
