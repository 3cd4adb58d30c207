"""The console's "go to" box and a person's own API tokens."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers
from django.views import View

from reconcile_app.console.mixins import StaffRequiredMixin, is_htmx
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.goto import KINDS, goto_resolve
from reconcile_app.selectors.principals import tokens_of
from reconcile_app.services.principals import api_key_prefix
from reconcile_app.services.tokens import token_create, token_revoke

GOTO_MISSING_TEMPLATE = "reconcile_app/goto_missing.html"
TOKENS_TEMPLATE = "reconcile_app/tokens.html"
TOKENS_REGION_TEMPLATE = "reconcile_app/partials/tokens_region.html"
MAX_QUERY_LENGTH = 200
# A new token waits between the create (POST) and the one page read that shows it in a
# signed cookie of the person's own browser, never in the server's session store: a
# credential is kept only as its hash at rest (a session row held it until the session
# expired when the redirect was not followed).
NEW_TOKEN_COOKIE = "console_new_token"
NEW_TOKEN_COOKIE_SECONDS = 60
NEW_TOKEN_COOKIE_PATH = "/tokens/"


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
    response = TemplateResponse(request, template, context, status=status)
    if new_token:
        # A page holding a usable credential must not outlive its one showing: no browser
        # cache (back button, disk) and no shared cache keeps a copy.
        add_never_cache_headers(response)
    return response


class TokensView(StaffRequiredMixin, View):
    """ "Your API tokens": the person's own keys, and a new one (shown once).

    htmx swaps the new token into the page in answer to its POST. A plain form POST is
    answered 303 to `/tokens/`, the token kept for that one GET in a signed, HttpOnly cookie
    of a minute's life (NEW_TOKEN_COOKIE): a reload reads the page afresh and neither
    re-posts (a second token) nor shows the token again.
    """

    def get(self, request: HttpRequest) -> HttpResponse:
        # Signed with the person's id: a cookie planted by anyone else is not shown.
        token: str = (
            request.get_signed_cookie(
                NEW_TOKEN_COOKIE,
                default="",
                salt=_cookie_salt(request),
                max_age=NEW_TOKEN_COOKIE_SECONDS,
            )
            or ""
        )
        prefix = api_key_prefix(token)  # the notice names it, as the list does
        notice = f"Token {prefix} created." if prefix else ""
        response = tokens_page(request, new_token=token if prefix else "", notice=notice)
        if NEW_TOKEN_COOKIE in request.COOKIES:
            response.delete_cookie(NEW_TOKEN_COOKIE, path=NEW_TOKEN_COOKIE_PATH)
        return response

    def post(self, request: HttpRequest) -> HttpResponse:
        key, token = token_create(user=request.user, request_id=request_id_of(request))
        notice = f"Token {key.prefix} created."
        if is_htmx(request):
            return tokens_page(request, status=201, new_token=token, notice=notice)
        response = redirect("console-tokens")
        response.status_code = 303  # "see other": the browser GETs the page, never re-posts
        response.set_signed_cookie(
            NEW_TOKEN_COOKIE,
            token,
            salt=_cookie_salt(request),
            max_age=NEW_TOKEN_COOKIE_SECONDS,
            path=NEW_TOKEN_COOKIE_PATH,
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
            samesite="Strict",
        )
        return response


def _cookie_salt(request: HttpRequest) -> str:
    return f"console-new-token:{request.user.pk}"


class TokenRevokeView(StaffRequiredMixin, View):
    def post(self, request: HttpRequest, prefix: str) -> HttpResponse:
        reason = request.POST.get("reason", "").strip()
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
