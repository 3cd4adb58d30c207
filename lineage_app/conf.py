"""The settings a host project gives lineage, each optional, read when used (so a test's
`settings` fixture applies), and refused with `ImproperlyConfigured` when malformed.

- `LINEAGE_API_PERMISSION_CLASSES`: dotted paths of the DRF permission classes guarding the
  lineage API (default: DRF's `IsAuthenticated`).
- `LINEAGE_CONSOLE_ACCESS`: dotted path of a callable `(user) -> bool` saying who may open the
  explorer page once signed in; others get 403 (default: every signed-in user).
- `LINEAGE_PROV_NAMESPACE`: `(prefix, uri)` of the identifiers in a PROV export.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string
from rest_framework.permissions import BasePermission

DEFAULT_API_PERMISSION_CLASSES = ("rest_framework.permissions.IsAuthenticated",)
DEFAULT_CONSOLE_ACCESS = "lineage_app.conf.signed_in"
DEFAULT_PROV_NAMESPACE = ("lineage", "https://lineage.invalid/ns#")


def signed_in(user: Any) -> bool:
    """The default console access: anyone signed in (the page itself asks for a sign-in)."""
    return bool(user.is_authenticated)


def api_permission_classes() -> list[type[BasePermission]]:
    paths = getattr(settings, "LINEAGE_API_PERMISSION_CLASSES", DEFAULT_API_PERMISSION_CLASSES)
    if isinstance(paths, str) or not isinstance(paths, Sequence):
        raise ImproperlyConfigured("LINEAGE_API_PERMISSION_CLASSES is a list of dotted paths")
    classes = [_imported(path, "LINEAGE_API_PERMISSION_CLASSES") for path in paths]
    for found in classes:
        if not (isinstance(found, type) and issubclass(found, BasePermission)):
            raise ImproperlyConfigured(
                f"LINEAGE_API_PERMISSION_CLASSES: {found!r} is not a DRF permission class"
            )
    return cast(list[type[BasePermission]], classes)


def console_access() -> Callable[[Any], bool]:
    path = getattr(settings, "LINEAGE_CONSOLE_ACCESS", DEFAULT_CONSOLE_ACCESS)
    check = _imported(path, "LINEAGE_CONSOLE_ACCESS")
    if not callable(check):
        raise ImproperlyConfigured("LINEAGE_CONSOLE_ACCESS names a callable (user) -> bool")
    return cast(Callable[[Any], bool], check)


def prov_namespace() -> tuple[str, str]:
    value = getattr(settings, "LINEAGE_PROV_NAMESPACE", DEFAULT_PROV_NAMESPACE)
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(part, str) and part for part in value)
    ):
        raise ImproperlyConfigured("LINEAGE_PROV_NAMESPACE is (prefix, uri)")
    return value[0], value[1]


def _imported(path: Any, setting: str) -> Any:
    if not isinstance(path, str):
        raise ImproperlyConfigured(f"{setting}: {path!r} is not a dotted path")
    try:
        return import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"{setting}: cannot import {path}: {exc}") from exc
