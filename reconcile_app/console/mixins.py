"""What every console page shares: who may see it, htmx partials, status tabs, polling,
form errors, and domain refusals turned into HTTP ones.

Pages call selectors and services; a selector's NotFound becomes the console's 404 through
`not_found_is_404`, a form's errors become a DomainError the page shows beside the form
(`form_error`), and a panel that polls counts its requests with `polls`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin, UserPassesTestMixin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.utils.cache import patch_vary_headers

from reconcile_app.choices import Role
from reconcile_app.errors import DomainError, NotFound
from reconcile_app.roles import has_role, is_staff_role

PER_PAGE = 25
# A panel or row waiting on background work asks the server again every POLL_SECONDS; after
# MAX_POLLS (three minutes) it stops and says so: a worker that is down must not keep an open
# tab asking forever.
POLL_SECONDS = 2
MAX_POLLS = 90


class StaffRequiredMixin(LoginRequiredMixin, UserPassesTestMixin):
    """People in a role (operator, reviewer, auditor). An agent's user is refused with 403:
    agents act through the API with their capabilities, never through the console."""

    def test_func(self) -> bool:
        return is_staff_role(self.request.user)  # type: ignore[attr-defined]


class OperatorRequiredMixin(LoginRequiredMixin, UserPassesTestMixin):
    def test_func(self) -> bool:
        return has_role(self.request.user, Role.OPERATOR)  # type: ignore[attr-defined]


class ReviewerRequiredMixin(LoginRequiredMixin, UserPassesTestMixin):
    def test_func(self) -> bool:
        return has_role(self.request.user, Role.REVIEWER)  # type: ignore[attr-defined]


class StatusTabsMixin:
    """A list whose status filter is a row of tabs with counts (a filterset with `status`).

    The tab is the status filter, "all" is no status filter, and the counts honour every
    other filter. Subclasses name their tabs, the default one, and how to count.
    """

    request: HttpRequest
    filterset: Any
    tabs: tuple[str, ...]
    default_tab: str

    def tab(self) -> str:
        tab = self.request.GET.get("status") or self.default_tab
        return tab if tab in self.tabs else self.default_tab

    def get_filterset_kwargs(self, filterset_class: Any) -> dict[str, Any]:
        kwargs = super().get_filterset_kwargs(filterset_class)  # type: ignore[misc]
        data = (kwargs.get("data") or QueryDict()).copy()
        tab = self.tab()
        if tab == "all":
            data.pop("status", None)
        else:
            data["status"] = tab
        kwargs["data"] = data
        return kwargs

    # Each list says how to count: its rows before any filter, and their counts by status.
    count_queryset: Callable[[], QuerySet]
    status_counts: Callable[[QuerySet], dict[str, int]]

    def tab_context(self) -> dict[str, Any]:
        others = self.filterset.data.copy()
        others.pop("status", None)
        unfiltered_by_status = type(self.filterset)(data=others, queryset=self.count_queryset())
        return {
            "tab": self.tab(),
            "tab_counts": self.status_counts(unfiltered_by_status.qs),
            "tab_query": _without(self.request.GET, "status", "page"),
        }


class HtmxPartialMixin:
    """Answer an htmx request with the partial it swaps in, anything else with the page.

    A history-restore request wants the whole page back, so it gets it. `Vary: HX-Request`
    stops a cache from serving a partial where a page was asked for.
    """

    request: HttpRequest
    partial_template_name: str

    def wants_partial(self) -> bool:
        htmx = getattr(self.request, "htmx", None)
        return bool(htmx) and not htmx.history_restore_request  # type: ignore[union-attr]

    def get_template_names(self) -> list[str]:
        if self.wants_partial():
            return [self.partial_template_name]
        return super().get_template_names()  # type: ignore[misc]

    def render_to_response(self, context: dict[str, Any], **kwargs: Any) -> HttpResponse:
        response = super().render_to_response(context, **kwargs)  # type: ignore[misc]
        patch_vary_headers(response, ("HX-Request",))
        return response


def _without(query: QueryDict, *names: str) -> str:
    kept = query.copy()
    for name in names:
        kept.pop(name, None)
    return kept.urlencode()


def is_htmx(request: HttpRequest) -> bool:
    """The request came from htmx (it wants a fragment, not a page)."""
    return bool(getattr(request, "htmx", False))


def polls(request: HttpRequest) -> int:
    """How many times a polling panel has asked so far (its `?polls=` counter)."""
    try:
        return max(0, int(request.GET.get("polls", "0")))
    except ValueError:
        return 0


def form_error(form: Any, codes: dict[str, str] | None = None) -> DomainError:
    """A form's errors as one refusal the page shows beside the form. `codes` names the code
    of a field's refusal, so the page marks that field (`aria-invalid`), as it does when the
    service refuses it."""
    text = " ".join(
        f"{form.fields[name].label or name.replace('_', ' ')}: {message}"
        if name in form.fields
        else str(message)
        for name, errors in form.errors.items()
        for message in errors
    )
    codes = codes or {}
    code = next((codes[name] for name in form.errors if name in codes), "invalid_request")
    return DomainError(text, code=code)


@contextmanager
def not_found_is_404() -> Iterator[None]:
    """A selector's or service's NotFound is the console's 404 page."""
    try:
        yield
    except NotFound as exc:
        raise Http404(exc.detail) from exc
