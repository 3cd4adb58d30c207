"""The probes and the metrics scrape answer whatever Host they are sent to, over plain HTTP.

Django refuses a Host outside ALLOWED_HOSTS (400) so that no link, redirect or cookie is
built on a name a client chose, and production settings redirect plain HTTP to HTTPS. The
callers of these three paths are machines inside the network that address each web host
directly: a load balancer probes by address, an orchestrator by the pod's IP, `./dev serve`
by 127.0.0.1, Prometheus scrapes `web1.internal:8000`. None of those names is the public one
ALLOWED_HOSTS lists, and none of them speaks TLS to a web host behind the proxy. Nothing
these paths answer is built on the Host (no links, redirects, cookies or cached pages), so
for them alone the Host is taken as sent, and they are never redirected (settings.py's
SECURE_REDIRECT_EXEMPT). `/metrics` still needs its token or a person's credentials.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

ANY_HOST_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# SecurityMiddleware matches these against the path without its leading slash.
PLAIN_HTTP_PATHS = [rf"^{path.lstrip('/')}$" for path in sorted(ANY_HOST_PATHS)]


class AnyHostMiddleware:
    """Before anything asks for the request's host (SecurityMiddleware, CommonMiddleware)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # `path`, not `path_info`: SecurityMiddleware's exemption is matched against `path`,
        # and the two differ under a SCRIPT_NAME prefix, where a redirect exempt on one and
        # not the other would carry the unchecked Host into its Location.
        if request.path in ANY_HOST_PATHS:
            # The header as sent, unchecked: HttpRequest.get_host without the ALLOWED_HOSTS test.
            request.get_host = request._get_raw_host  # type: ignore[method-assign,attr-defined]
        return self.get_response(request)
