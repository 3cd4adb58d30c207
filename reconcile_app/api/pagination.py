from __future__ import annotations

from typing import Any

from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """The limits as the server applies them: a page from 1 (past the last: 404
        `not_found`), a page size of 1 to 500 (larger is served as 500)."""
        limits = {
            self.page_query_param: {"minimum": 1},
            self.page_size_query_param: {"minimum": 1, "maximum": self.max_page_size},
        }
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"] = {**parameter["schema"], **limits.get(parameter["name"], {})}
        return parameters
