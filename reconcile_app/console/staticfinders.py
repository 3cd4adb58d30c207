"""Serve plotly.js from the installed plotly package, so the console needs no CDN.

Only the one minified file is exposed: the package_data folder holds other large files that
must not end up in STATIC_ROOT.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = "vendor/plotly.min.js"
_PACKAGE_DATA = Path(plotly.__file__).parent / "package_data"


class PlotlyJsFinder(BaseFinder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(_PACKAGE_DATA))
        self.storage.prefix = "vendor"  # type: ignore[attr-defined]

    def check(self, **kwargs: Any) -> list[Any]:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        if path == PLOTLY_JS:
            match = str(_PACKAGE_DATA / "plotly.min.js")
            return [match] if find_all else match
        return [] if find_all else None

    def list(self, ignore_patterns: Any) -> Any:
        yield "plotly.min.js", self.storage
