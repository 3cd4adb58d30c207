from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request


def _not_a_page(raw: str | None, *also: str) -> bool:
    """A value given that is not a whole number from 1 (nor one of `also`)."""
    if raw is None or raw == "" or raw in also:
        return False
    return not (raw.isascii() and raw.isdigit() and int(raw) >= 1)


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int | None:
        # A page size that is not a whole number from 1 was served as the default 50, and
        # `next` carried it on: a script's `page_size=0` (an unset variable) copied 50 rows
        # a page without a word. Too large is still served as the largest (documented).
        raw = request.query_params.get(self.page_size_query_param)
        if _not_a_page(raw):
            raise ValidationError({self.page_size_query_param: "a whole number from 1"})
        return super().get_page_size(request)

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> Any:
        # `page=0` or `page=abc` answered 404 `not_found`, the answer for a page past the
        # end, which a copying loop reads as "done": it stopped having copied nothing. Only a
        # page that does not exist is 404; one that cannot be a page is the caller's error.
        raw = request.query_params.get(self.page_query_param)
        if _not_a_page(raw, *self.last_page_strings):
            raise ValidationError({self.page_query_param: "a whole number from 1"})
        return super().paginate_queryset(queryset, request, view)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """The limits as the server applies them: a page from 1 (past the last: 404
        `not_found`; not a whole number from 1: 400 `invalid_request`), a page size of 1 to
        500 (larger is served as 500; not a whole number from 1: 400)."""
        limits = {
            self.page_query_param: {"minimum": 1},
            self.page_size_query_param: {"minimum": 1, "maximum": self.max_page_size},
        }
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"] = {**parameter["schema"], **limits.get(parameter["name"], {})}
        return parameters
