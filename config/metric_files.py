"""Multiprocess metric files whose space is taken before they are mapped.

prometheus_client keeps each gunicorn worker's request histograms in a file it maps into
memory (`PROMETHEUS_MULTIPROC_DIR`), and makes room in it by `truncate()`, which on Linux
extends a file without allocating a block. Writing through the mapping into a page the
filesystem then cannot allocate is not an error Python can catch: the kernel kills the
process with SIGBUS. Seen live with the var directory on a full filesystem (2026-12-07): every
gunicorn worker died at its next request, and each replacement died at its first, since a new
worker's file is new; agents got their connections reset, never a 503.

Here every extension is `posix_fallocate`d first, so a full disk is an `OSError` (ENOSPC) at
the moment a series is created, which the request-metrics middleware survives
(config/http_metrics.py), and the pages behind the mapping exist before it is written.
`install()` puts this class where prometheus_client looks it up when a value is created.
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import mmap_dict, values

# A value's entry: its key's length (4 bytes), the key padded to 8 (at most 8 more), then the
# value and the timestamp (8 bytes each); see MmapedDict._init_value.
_ENTRY_OVERHEAD = 4 + 8 + 16


class AllocatedMmapedDict(mmap_dict.MmapedDict):  # type: ignore[misc]
    def __init__(self, filename: str, read_mode: bool = False) -> None:
        if not read_mode:
            descriptor = os.open(filename, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if os.fstat(descriptor).st_size == 0:
                    os.posix_fallocate(descriptor, 0, mmap_dict._INITIAL_MMAP_SIZE)
            finally:
                os.close(descriptor)
        super().__init__(filename, read_mode)

    def _init_value(self, key: str) -> Any:
        needed = self._used + len(key.encode("utf-8")) + _ENTRY_OVERHEAD
        capacity = self._capacity
        while needed > capacity:
            capacity *= 2
        if capacity > self._capacity:
            # The same doubling prometheus_client does next, allocated first: its truncate to
            # that size then changes nothing.
            os.posix_fallocate(self._f.fileno(), 0, capacity)
        return super()._init_value(key)


def install() -> None:
    """Make prometheus_client create its multiprocess files through `AllocatedMmapedDict`."""
    values.MmapedDict = AllocatedMmapedDict  # type: ignore[misc]
