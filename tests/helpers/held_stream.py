"""A response stream a test transport can hold back: the controller integration tests use it
to make an informer's watch lag behind the API server (shared by their tap transports)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import httpx

__all__ = ["HeldStream"]


class HeldStream(httpx.AsyncByteStream):
    """A response stream whose chunks wait while ``gate()`` returns an unset Event (no async
    generator of its own, so an abandoned watch closes the inner stream cleanly on trio too)."""

    def __init__(self, inner: Any, gate: Callable[[], anyio.Event | None]) -> None:
        self._inner = inner
        self._gate = gate
        self._it: Any = None

    def __aiter__(self) -> HeldStream:
        self._it = self._inner.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        chunk: bytes = await self._it.__anext__()
        gate = self._gate()
        if gate is not None:
            await gate.wait()
        return chunk

    async def aclose(self) -> None:
        it, self._it = self._it, None
        if it is not None and hasattr(it, "aclose"):
            await it.aclose()
        await self._inner.aclose()
