"""A server that accepts connections and never answers: a dependency hung, not down.

A closed port fails at once and proves nothing about timeouts; a hung broker, cache, database
or owner accepts the connection (the kernel completes the handshake into the listen backlog)
and then says nothing, which is what a client without a read timeout waits on for ever.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator


@contextlib.contextmanager
def silent_listener() -> Iterator[int]:
    """The port of a listening socket on 127.0.0.1 that never accepts or answers."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield server.getsockname()[1]
    finally:
        server.close()
