"""`{% filter_form %}`: the one filter form every console list uses.

The filtersets are shared with the API; the console shows some of their fields (`fields`),
carries others it does not show when a link set them (`carry`), keeps the table's sort,
and — on a page with status tabs — the tab. A page whose table is swapped by id names it
(`target`); a region that swaps itself leaves it out. A page about one thing names it
(`url_arg`, the URL's one argument).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

register = template.Library()


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


@register.inclusion_tag("reconcile_app/partials/filter_form.html", takes_context=True)
def filter_form(
    context: template.Context,
    form: Any,
    form_id: str,
    url_name: str,
    *,
    fields: str,
    carry: str = "",
    tab: str = "",
    target: str = "",
    export_url: str = "",
    export_id: str = "",
    compact: bool = False,
    url_arg: str = "",
) -> dict[str, Any]:
    action = reverse(url_name, args=[url_arg] if url_arg else None)
    if form.is_bound and form.errors:
        # A value the filter refused (`?result=bogus`) lists nothing: the field says why,
        # rather than showing "any" over an empty table.
        for name in form.errors:
            if name in _names(fields):
                attrs = form.fields[name].widget.attrs
                attrs["aria-invalid"] = "true"
                attrs["aria-describedby"] = f"{form[name].id_for_label}-error"
    return {
        "request": context.get("request"),
        "form": form,
        "form_id": form_id,
        "action": action,
        "clear_url": f"{action}?status={tab}" if tab else action,
        "shown": [form[name] for name in _names(fields)],
        "carried": [form[name] for name in _names(carry)],
        "tab": tab,
        "target": target,
        "export_url": export_url,
        "export_id": export_id,
        "compact": compact,
    }
