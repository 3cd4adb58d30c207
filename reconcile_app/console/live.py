"""Live queues: a list page that tells its reader when rows arrive, without moving them.

A queue page (unknown outcomes, escalations, contradictions) carries a watermark of what it
shows: how many rows match its filters and the newest row's primary key. Every
`LIVE_SECONDS` the browser (static/reconcile/live.js) asks the same URL with `?live=<newest>`
and gets back, as JSON, how many rows match now and how many are newer than the watermark.
It then offers "n new — show"; the table itself is re-read only when the operator asks, so a
row never moves under a cursor or a half-made selection. A paused page asks nothing.

The poll is one aggregate query over the page's own filterset (after authentication): its
cost does not grow with the rows.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Max, Q, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers

LIVE_SECONDS = 10
LIVE_PARAMETER = "live"


def _watermark(queryset: QuerySet, *, newer_than: int | None = None) -> dict[str, int]:
    """Matching rows, the newest primary key, and (given one) how many are newer than it."""
    aggregates: dict[str, Any] = {"count": Count("pk"), "newest": Max("pk")}
    if newer_than is not None:
        aggregates["new"] = Count("pk", filter=Q(pk__gt=newer_than))
    # No ordering or annotation survives into the aggregate: the queue's ORDER BY (ages,
    # attempts) means nothing to a count.
    figures = queryset.order_by().aggregate(**aggregates)
    return {key: int(value or 0) for key, value in figures.items()}


def _without_live(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop(LIVE_PARAMETER, None)
    encoded = query.urlencode()
    return f"{request.path}?{encoded}" if encoded else request.path


class LiveQueueMixin:
    """A FilterView whose rows the reader can follow live (see the module docstring).

    `live_region` names the element the "show" button re-reads (the page's table region).
    """

    request: HttpRequest
    filterset: Any
    live_region: str

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        since = request.GET.get(LIVE_PARAMETER)
        if since is None:
            return super().get(request, *args, **kwargs)  # type: ignore[misc]
        try:
            newer_than = max(0, int(since))
        except ValueError:
            newer_than = 0
        filterset = self.get_filterset(self.get_filterset_class())  # type: ignore[attr-defined]
        queryset = filterset.qs if filterset.is_valid() else filterset.queryset.none()
        response = JsonResponse(_watermark(queryset, newer_than=newer_than))
        add_never_cache_headers(response)
        return response

    def live_context(self) -> dict[str, Any]:
        """The watermark of what this page shows, and where to ask for news."""
        filterset = self.filterset
        queryset = filterset.qs if filterset.is_valid() else filterset.queryset.none()
        watermark = _watermark(queryset)
        reload_url = _without_live(self.request)
        poll = self.request.GET.copy()
        poll.pop("page", None)
        poll[LIVE_PARAMETER] = str(watermark["newest"])
        return {
            "live": {
                **watermark,
                "poll_url": f"{self.request.path}?{poll.urlencode()}",
                "reload_url": reload_url,
                "region": self.live_region,
                "seconds": LIVE_SECONDS,
            }
        }
