"""A signal receiver a test triggers: ``serve(..., receiver=signals)`` stops on
``await signals.send.send(signal.SIGTERM)`` (``kcm.runtime.run_until_signal``'s seam)."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import anyio

__all__ = ["FakeSignals"]


class FakeSignals:
    """Delivers what is sent on :attr:`send` to the one receiver it opens."""

    def __init__(self) -> None:
        self.send, self._receive = anyio.create_memory_object_stream[signal.Signals](1)

    @contextmanager
    def __call__(self) -> Iterator[AsyncIterator[signal.Signals]]:
        with self._receive:
            yield self._receive
