"""Live queues: a list page that tells its reader when rows arrive, without moving them.

A queue page (unknown outcomes, escalations, contradictions) carries a watermark of what it
lists: how many rows match its filters, the newest row's primary key, and a digest of the
listed set (the sum of its primary keys). Every `LIVE_SECONDS` the browser
(static/reconcile/live.js) asks the same URL with `?live=<newest>.<count>.<digest>` and gets
back, as JSON, what changed since:

- `new`: rows created since the page was read (primary key above the watermark's newest);
- `entered` / `gone`: older rows that came into the filter (an effect sent before the page
  was read that has since become unknown — the common case after an outage) or left it
  (resolved, decided), net of each other;
- `changed`: whether the older rows are still the set the page lists (count and digest),
  true even when as many entered as left and the count alone would hide it.

It then offers "n new · m gone — show" (or "listed rows changed — show" for a swap); the
table itself is re-read only when the operator asks, so a row never moves under a cursor or
a half-made selection. A paused page asks nothing.

The poll is one aggregate query over the page's own filterset (after authentication): its
cost does not grow with the rows. The digest is a sum, so two different sets of older rows
with the same count and the same sum of keys read as unchanged; that needs rows to enter
and leave in one interval with keys summing alike, and the next change shows it.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Max, Q, QuerySet, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers

LIVE_SECONDS = 10
LIVE_PARAMETER = "live"


def _watermark(queryset: QuerySet) -> dict[str, int]:
    """Matching rows, the newest primary key and the digest (sum of keys) of the listed set."""
    figures = queryset.order_by().aggregate(count=Count("pk"), newest=Max("pk"), digest=Sum("pk"))
    return {key: int(value or 0) for key, value in figures.items()}


def _changes(queryset: QuerySet, *, seen: tuple[int, int, int] | None) -> dict[str, Any]:
    """What changed against the watermark `seen` (newest, count, digest) the page carries.

    No ordering or annotation survives into the aggregate: the queue's ORDER BY (ages,
    attempts) means nothing to a count. Without a readable watermark every row is new.
    """
    newest, count, digest = seen or (0, 0, 0)
    older = Q(pk__lte=newest)
    figures = queryset.order_by().aggregate(
        count=Count("pk"),
        newest=Max("pk"),
        new=Count("pk", filter=~older),
        older=Count("pk", filter=older),
        older_digest=Sum("pk", filter=older),
    )
    now = {key: int(value or 0) for key, value in figures.items()}
    net = now["older"] - count
    return {
        "count": now["count"],
        "newest": now["newest"],
        "new": now["new"],
        # Net figures: 2 in and 1 out read as 1 entered; `changed` still tells the swap.
        "entered": max(net, 0),
        "gone": max(-net, 0),
        "changed": net != 0 or now["older_digest"] != digest,
    }


def _seen(raw: str) -> tuple[int, int, int] | None:
    """`<newest>.<count>.<digest>` as the page wrote it; a bare `<newest>` knows no set."""
    try:
        parts = [max(0, int(part)) for part in raw.split(".")]
    except ValueError:
        return None
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    return None


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
        filterset = self.get_filterset(self.get_filterset_class())  # type: ignore[attr-defined]
        queryset = filterset.qs if filterset.is_valid() else filterset.queryset.none()
        response = JsonResponse(_changes(queryset, seen=_seen(since)))
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
        poll[LIVE_PARAMETER] = "{newest}.{count}.{digest}".format(**watermark)
        return {
            "live": {
                **watermark,
                "poll_url": f"{self.request.path}?{poll.urlencode()}",
                "reload_url": reload_url,
                "region": self.live_region,
                "seconds": LIVE_SECONDS,
            }
        }
