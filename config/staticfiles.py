"""Static files in production: hashed names, gzip and Brotli beside each file (whitenoise),
without a minute of compression at every start.

whitenoise's CompressedManifestStaticFilesStorage compresses every file at every
`collectstatic`, Brotli at quality 11: plotly.js (4.8 MB, two copies: hashed and plain)
took 18-30 s per copy here, and a whole `collectstatic` 75 s. Two changes:

- Brotli at quality 9: 1.3 s for plotly.js, 1.23 MB against 1.11 MB at 11 (gzip: 1.47 MB).
- A `.gz` or `.br` already beside a file is kept when it decompresses to exactly that file's
  bytes, so a restart compresses only what changed (3 s instead of 75). The content is
  compared, not modification times: Django rewrites every hashed `.js` and `.css` at each
  run (same name, same bytes, new time), and a write cut short fails the comparison.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable
from typing import Any

import brotli
from whitenoise.compress import Compressor
from whitenoise.storage import CompressedManifestStaticFilesStorage

BROTLI_QUALITY = 9
DECOMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    ".br": brotli.decompress,
    ".gz": gzip.decompress,
}


class ReusingCompressor(Compressor):
    def compress(self, path: str) -> list[str]:
        siblings = [
            path + suffix
            for suffix, wanted in ((".br", self.use_brotli), (".gz", self.use_gzip))
            if wanted
        ]
        with open(path, "rb") as source:
            stat = os.fstat(source.fileno())
            content = source.read()
        if siblings and all(_holds(sibling, content) for sibling in siblings):
            # As whitenoise does for what it writes: a sibling carries its file's time.
            for sibling in siblings:
                os.utime(sibling, (stat.st_atime, stat.st_mtime))
            return siblings
        compressed: list[str] = super().compress(path)
        return compressed

    @staticmethod
    def compress_brotli(data: bytes) -> bytes:
        compressed: bytes = brotli.compress(data, quality=BROTLI_QUALITY)
        return compressed


def _holds(sibling: str, content: bytes) -> bool:
    """Whether the compressed file at `sibling` decompresses to exactly `content`."""
    decompress = DECOMPRESSORS[os.path.splitext(sibling)[1]]
    try:
        with open(sibling, "rb") as compressed:
            return decompress(compressed.read()) == content
    except (OSError, EOFError, zlib.error, brotli.error):
        return False


class CompressedStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """whitenoise's storage (hashed names, .gz and .br) with compressed files reused."""

    def create_compressor(self, **kwargs: Any) -> Compressor:
        return ReusingCompressor(**kwargs)
