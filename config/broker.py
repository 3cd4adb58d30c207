"""The embedded broker: kombu's filesystem transport, with messages that appear whole.

kombu creates a message's file under its final name and then writes into it; a worker polling
the folder can take the file in between and read nothing, which kombu raises as a JSON error
that stops the worker ("Unrecoverable error"). A soak of the embedded mode lost its only
worker that way. Here a message is written under a name no consumer takes and renamed into
place; a rename within one folder is atomic, so a consumer sees the whole message or none.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

# `Channel._get` takes only names ending in `.{queue}.msg`; this prefix never does.
PARTIAL_PREFIX = ".partial-"


class FilesystemChannel(filesystem.Channel):
    # kombu's filesystem Channel already widens its base's `_put(queue, message)` this way.
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        body = str_to_bytes(dumps(payload))
        # The name kombu gives it: the time first, so consumers take messages in order.
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        partial = os.path.join(self.data_folder_out, f"{PARTIAL_PREFIX}{uuid.uuid4()}")
        try:
            with open(partial, "wb") as handle:
                handle.write(body)
            os.replace(partial, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            raise ChannelError(f"Cannot add file {name!r} to directory") from exc


class FilesystemTransport(filesystem.Transport):
    Channel = FilesystemChannel
