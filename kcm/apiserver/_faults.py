"""Fault injection for reliability tests: the public ``server.faults`` object."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from ._status import StatusError

if TYPE_CHECKING:
    from ._store import Store

__all__ = ["Faults"]


class Faults:
    """Break the server on purpose, from the test that owns it.

    Every method takes effect at once and is safe to call from the event loop that runs the
    server. Faults apply to every client (match one with ``partition``).
    """

    def __init__(self, get_store: object) -> None:
        self._get_store = get_store
        self._fail_count = 0
        self._fail_code = 429
        self._retry_after = 1
        self._partitions: dict[str, anyio.Event] = {}
        self.held = 0
        """How many requests or watch writes a partition holds right now."""
        self._held_changed: anyio.Event | None = None

    @property
    def _store(self) -> Store:
        store: Store = self._get_store()  # type: ignore[operator]
        return store

    def close_watches(self) -> int:
        """End every open watch stream cleanly (clients see EOF and must re-watch).

        Returns:
            How many watches were closed.
        """
        return self._store.close_watches()

    def compact(self) -> None:
        """Drop the event history: the next watch (or continue token) from any resourceVersion
        older than now gets 410 Gone ("too old resource version"), as after an etcd compaction.
        """
        self._store.compact()

    def fail_next(self, n: int, *, code: int = 429, retry_after: int = 1) -> None:
        """Make the next ``n`` requests fail with ``code`` (429 with Retry-After, or 500).

        Args:
            n: how many requests fail (discovery and health requests count too).
            code: 429 (TooManyRequests, with a ``Retry-After`` header) or 500 (InternalError).
            retry_after: the Retry-After seconds sent with a 429.

        Raises:
            ValueError: a code other than 429 or 500.
        """
        if code not in (429, 500):
            raise ValueError(f"fail_next supports code 429 or 500, not {code}")
        self._fail_count = n
        self._fail_code = code
        self._retry_after = retry_after

    def partition(self, user_agent: str) -> None:
        """Hold every response to requests whose User-Agent contains ``user_agent`` (including
        events on their open watches) until :meth:`heal`. Requests are accepted, never answered.
        """
        self._partitions.setdefault(user_agent, anyio.Event())

    def heal(self, user_agent: str | None = None) -> None:
        """End the partition of ``user_agent`` (every partition when None): held responses flow."""
        names = list(self._partitions) if user_agent is None else [user_agent]
        for name in names:
            event = self._partitions.pop(name, None)
            if event is not None:
                event.set()

    # -- used by the ASGI app --------------------------------------------------------------

    def take_failure(self) -> StatusError | None:
        if self._fail_count <= 0:
            return None
        self._fail_count -= 1
        if self._fail_code == 429:
            return StatusError(
                429,
                "TooManyRequests",
                "the server has received too many requests and has asked us to try again later",
                details={"retryAfterSeconds": self._retry_after},
                headers={"Retry-After": str(self._retry_after)},
            )
        return StatusError(500, "InternalError", "Internal error occurred: injected fault")

    def partitioned(self, user_agent: str) -> anyio.Event | None:
        for name, event in self._partitions.items():
            if name in user_agent:
                return event
        return None

    async def wait_held(self, count: int = 1) -> None:
        """Wait until partitions hold at least ``count`` requests or watch writes: a test then
        knows the server got that far and is holding them, without sleeping and hoping.
        Wrap it in a timeout (``anyio.fail_after``)."""
        while self.held < count:
            if self._held_changed is None:
                self._held_changed = anyio.Event()
            await self._held_changed.wait()

    async def gate(self, user_agent: str) -> None:
        """Wait while ``user_agent`` is partitioned."""
        if self.partitioned(user_agent) is None:
            return
        self.held += 1
        if self._held_changed is not None:
            self._held_changed.set()
            self._held_changed = None
        try:
            while (event := self.partitioned(user_agent)) is not None:
                await event.wait()
        finally:
            self.held -= 1
