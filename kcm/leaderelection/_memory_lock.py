"""An in-memory lock with optimistic concurrency and injectable faults, for tests and demos."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import anyio
import msgspec

from kcm.errors import AlreadyExists, Conflict, KcmError, NotFound, TransportError

from ._record import LeaderElectionRecord, default_identity

__all__ = ["InMemoryLock", "InMemoryLockStore"]

_encoder = msgspec.json.Encoder()


@final
class InMemoryLockStore:
    """Plays the API server for :class:`InMemoryLock`: one record plus a version counter.

    Faults are injected per identity, so one elector can be cut off while others proceed:

    * :meth:`fail_next` - the next *n* calls fail with an error (a 500 burst by default).
    * :meth:`partition` - calls from ``identity`` hang until :meth:`heal` (a network
      partition that pauses requests; the caller's own deadlines cancel them).
    * :meth:`lose_responses` - writes from ``identity`` are applied but the caller gets a
      :class:`~kcm.errors.TransportError` (the reply was lost).
    """

    def __init__(self) -> None:
        self.record: LeaderElectionRecord | None = None
        self.version = 0
        self.writes: list[tuple[str, LeaderElectionRecord]] = []
        self._fail: list[tuple[str | None, Callable[[], KcmError]]] = []
        self._partitioned: set[str] = set()
        self._lost_replies: set[str] = set()
        self._healed = anyio.Event()

    def fail_next(
        self,
        n: int = 1,
        *,
        identity: str | None = None,
        error: Callable[[], KcmError] | None = None,
    ) -> None:
        """Make the next ``n`` calls (from ``identity``, or from anyone) raise ``error()``."""
        factory = error or (lambda: TransportError("injected failure"))
        self._fail.extend((identity, factory) for _ in range(n))

    def partition(self, identity: str) -> None:
        """Calls from ``identity`` block until :meth:`heal`."""
        self._partitioned.add(identity)

    def heal(self, identity: str | None = None) -> None:
        """End the partition of ``identity`` (or of everyone) and stop losing its replies."""
        if identity is None:
            self._partitioned.clear()
            self._lost_replies.clear()
        else:
            self._partitioned.discard(identity)
            self._lost_replies.discard(identity)
        self._healed.set()
        self._healed = anyio.Event()

    def lose_responses(self, identity: str) -> None:
        """Writes from ``identity`` take effect, but the caller sees a TransportError."""
        self._lost_replies.add(identity)

    async def _enter(self, identity: str) -> None:
        await anyio.lowlevel.checkpoint()
        while identity in self._partitioned:
            await self._healed.wait()
        for i, (who, factory) in enumerate(self._fail):
            if who is None or who == identity:
                del self._fail[i]
                raise factory()

    def _reply(self, identity: str) -> None:
        if identity in self._lost_replies:
            raise TransportError("injected lost reply")


@final
class InMemoryLock:
    """A :class:`ResourceLock` backed by an :class:`InMemoryLockStore` (one per process).

    It caches the version it last read or wrote; :meth:`update` fails with
    :class:`~kcm.errors.Conflict` when the store moved on since, exactly like a PUT carrying a
    stale ``resourceVersion``.
    """

    def __init__(
        self,
        store: InMemoryLockStore,
        identity: str | None = None,
        *,
        name: str = "memory/lock",
    ) -> None:
        self._store = store
        self._identity = identity or default_identity()
        self._name = name
        self._version: int | None = None
        self.events: list[str] = []
        self.calls: list[str] = []
        """Every method called, in order (``"get"``, ``"create"``, ``"update"``)."""

    @property
    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return self._name

    def record_event(self, message: str) -> None:
        self.events.append(message)

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        self.calls.append("get")
        store = self._store
        await store._enter(self._identity)
        if store.record is None:
            raise NotFound(f"lock {self._name} not found")
        self._version = store.version
        return store.record, _encoder.encode(store.record)

    async def create(self, record: LeaderElectionRecord) -> None:
        self.calls.append("create")
        store = self._store
        await store._enter(self._identity)
        if store.record is not None:
            raise AlreadyExists(f"lock {self._name} already exists")
        self._write(record)

    async def update(self, record: LeaderElectionRecord) -> None:
        self.calls.append("update")
        store = self._store
        if self._version is None:
            raise RuntimeError("lock not initialized: get() or create() must succeed first")
        await store._enter(self._identity)
        if store.record is None:
            raise NotFound(f"lock {self._name} not found")
        if store.version != self._version:
            raise Conflict(f"lock {self._name} was modified (version {store.version})")
        self._write(record)

    def _write(self, record: LeaderElectionRecord) -> None:
        store = self._store
        store.record = record
        store.version += 1
        store.writes.append((self._identity, record))
        store._reply(self._identity)  # a lost reply: the caller never learns the new version
        self._version = store.version
