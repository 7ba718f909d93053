"""The storage core: objects as JSON dicts, one global resourceVersion, history and watch fan-out.

Everything here is synchronous, so a write, its history entry and its delivery to every watcher
happen atomically with respect to other tasks (no await in between). The HTTP layer only waits
on the per-watcher memory streams.

Invariants:
- ``rv`` is the resourceVersion of the last write; each write takes ``rv + 1``.
- ``history`` holds every event with ``floor < event.rv <= rv`` (oldest evicted first), so a
  watch or a consistent list "as of" any RV ``>= floor`` can be served; older ones get 410.
- Stored dicts are never mutated after they are stored; writers hand in fresh dicts.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._data_dir import create_private, private_dir
from ._encryption import Encryption

__all__ = ["Backend", "Event", "MemoryBackend", "SqliteBackend", "Store", "Watch"]

RKey = tuple[str, str]  # (group, plural)
OKey = tuple[str, str]  # (namespace, name)
Obj = dict[str, Any]

_encode = msgspec.json.encode
_decode = msgspec.json.decode
_SIDE_FILES = ("-wal", "-shm", "-journal")


def deep_copy(obj: Obj) -> Obj:
    """A deep copy of a JSON dict (msgspec round trip: several times faster than deepcopy)."""
    result: Obj = _decode(_encode(obj))
    return result


class Event:
    """One write: its RV, type, resource, the object after it and the object before it."""

    __slots__ = ("_lines", "obj", "old", "rkey", "rv", "type")

    def __init__(self, rv: int, type: str, rkey: RKey, obj: Obj, old: Obj | None) -> None:
        self.rv = rv
        self.type = type
        self.rkey = rkey
        self.obj = obj
        self.old = old
        self._lines: dict[str, bytes] = {}

    def line(self, type: str | None = None) -> bytes:
        """The watch-stream line for this event, serialized once and shared by every watcher."""
        t = type or self.type
        line = self._lines.get(t)
        if line is None:
            line = b'{"type":"' + t.encode() + b'","object":' + _encode(self.obj) + b"}\n"
            self._lines[t] = line
        return line

    def left_line(self) -> bytes:
        """The DELETED line of an object that stopped matching a watch's selector: its state
        before this event, at this event's resourceVersion (as kube's watch cache sends it)."""
        line = self._lines.get("LEFT")
        if line is None:
            assert self.old is not None
            old = {
                **self.old,
                "metadata": {**self.old["metadata"], "resourceVersion": str(self.rv)},
            }
            line = b'{"type":"DELETED","object":' + _encode(old) + b"}\n"
            self._lines["LEFT"] = line
        return line


class Watch:
    """A registered watcher: a filter and the memory stream its HTTP response reads from."""

    def __init__(
        self,
        rkey: RKey,
        namespace: str | None,
        matches: Callable[[Obj], bool] | None,
        buffer: int,
    ) -> None:
        self.rkey = rkey
        self.namespace = namespace
        self.matches = matches
        send, receive = anyio.create_memory_object_stream[bytes](buffer)
        self.send: MemoryObjectSendStream[bytes] = send
        self.receive: MemoryObjectReceiveStream[bytes] = receive
        self.dropped = False

    def render(self, event: Event) -> bytes | None:
        """The line this watcher sees for ``event``, or None when its filter hides the event.

        A MODIFIED object that starts (stops) matching the selector is an ADDED (a DELETED of
        its previous state).
        """
        obj = event.obj
        if self.namespace and obj.get("metadata", {}).get("namespace") != self.namespace:
            return None
        etype = event.type
        if self.matches is not None:
            now = self.matches(obj)
            if etype == "MODIFIED":
                before = event.old is not None and self.matches(event.old)
                if now and not before:
                    etype = "ADDED"
                elif before and not now:
                    return event.left_line()
                elif not now:
                    return None
            elif not now:
                return None
        return event.line(etype)

    def offer(self, event: Event) -> bool:
        """Queue ``event`` if it passes the filter; False when this watcher must be dropped."""
        line = self.render(event)
        if line is None:
            return True
        try:
            self.send.send_nowait(line)
        except anyio.WouldBlock:
            return False  # too slow: dropped rather than waited for
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    def close(self) -> None:
        self.dropped = True
        self.send.close()


class Backend(Protocol):
    """Where writes go besides memory. ``write`` must be atomic (all or nothing)."""

    def load(self) -> tuple[int, dict[RKey, dict[OKey, Obj]]]: ...

    def write(self, rv: int, rkey: RKey, okey: OKey, obj: Obj | None) -> None: ...

    def close(self) -> None: ...


class MemoryBackend:
    """No persistence: state lives as long as the :class:`Store`."""

    def load(self) -> tuple[int, dict[RKey, dict[OKey, Obj]]]:
        return 0, {}

    def write(self, rv: int, rkey: RKey, okey: OKey, obj: Obj | None) -> None:
        pass

    def close(self) -> None:
        pass


class SqliteBackend:
    """State in one SQLite file; each write is one transaction, so a crash keeps the last state.

    The global RV is stored with every write, so it keeps increasing across restarts. With
    ``encryption`` the resources it names (Secrets, typically) are stored encrypted.

    Raises:
        EncryptionError: (on :meth:`load`) a stored value the configured keys cannot read.
    """

    def __init__(self, data_dir: str | Path, encryption: Encryption | None = None) -> None:
        self.encryption = encryption or Encryption({})
        path = Path(data_dir)
        private_dir(path, warn=False)  # the server's DataDirLock warns
        self.path = path / "kcm-apiserver.sqlite3"
        # 0600 before SQLite opens it: its -wal and -shm files take the database's mode
        for name in (self.path, *(self.path.with_name(self.path.name + s) for s in _SIDE_FILES)):
            if name == self.path or name.exists():
                create_private(name)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS objects (grp TEXT, plural TEXT, ns TEXT, name TEXT,"
            " data BLOB, PRIMARY KEY (grp, plural, ns, name))"
        )
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER)")

    def load(self) -> tuple[int, dict[RKey, dict[OKey, Obj]]]:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()
        rv = int(row[0]) if row else 0
        objects: dict[RKey, dict[OKey, Obj]] = {}
        for grp, plural, ns, name, data in self._db.execute(
            "SELECT grp, plural, ns, name, data FROM objects"
        ):
            data = self.encryption.open((grp, plural), (ns, name), data)
            objects.setdefault((grp, plural), {})[(ns, name)] = _decode(data)
        return rv, objects

    def write(self, rv: int, rkey: RKey, okey: OKey, obj: Obj | None) -> None:
        db = self._db
        db.execute("BEGIN")
        try:
            if obj is None:
                db.execute(
                    "DELETE FROM objects WHERE grp=? AND plural=? AND ns=? AND name=?",
                    (*rkey, *okey),
                )
            else:
                data = self.encryption.seal(rkey, okey, _encode(obj))
                db.execute(
                    "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)",
                    (*rkey, *okey, data),
                )
            db.execute("INSERT OR REPLACE INTO meta VALUES ('rv', ?)", (rv,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()


class HistoryExpired(Exception):
    """The requested resourceVersion is older than the history window."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class Store:
    """Objects by resource and key, the global RV, the event history and the watchers."""

    def __init__(
        self,
        backend: Backend | None = None,
        *,
        history: int = 10_000,
        watch_buffer: int = 10_000,
    ) -> None:
        self.backend: Backend = backend or MemoryBackend()
        self.rv, self.objects = self.backend.load()
        self.revisions: dict[RKey, int] = {}
        """The resource version of each resource's latest write in this process (caches of
        derived state, such as RBAC's bindings per user, compare it)."""
        self.floor = self.rv
        self.history: deque[Event] = deque()
        self.history_size = history
        self.watch_buffer = watch_buffer
        self._watchers: dict[RKey, set[Watch]] = {}
        self._watch_added: anyio.Event | None = None
        self.dropped_watchers = 0
        self.watches_added = 0  # ever opened: tests wait for "one more" without a race

    # -- reads -----------------------------------------------------------------------------

    def get(self, rkey: RKey, namespace: str, name: str) -> Obj | None:
        return self.objects.get(rkey, {}).get((namespace, name))

    def items(self, rkey: RKey, namespace: str | None = None) -> Iterable[Obj]:
        bucket = self.objects.get(rkey, {})
        if namespace is None:
            return bucket.values()
        return [o for (ns, _), o in bucket.items() if ns == namespace]

    def snapshot(self, rkey: RKey, at: int) -> dict[OKey, Obj]:
        """The objects of ``rkey`` as they were at resourceVersion ``at``.

        Raises:
            HistoryExpired: ``at`` is older than the history window.
        """
        if at < self.floor:
            raise HistoryExpired(at, self.floor)
        state = dict(self.objects.get(rkey, {}))
        for event in reversed(self.history):
            if event.rv <= at:
                break
            if event.rkey != rkey:
                continue
            meta = event.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if event.type == "ADDED":
                state.pop(key, None)
            elif event.old is not None:
                state[key] = event.old
        return state

    # -- writes ----------------------------------------------------------------------------

    def _commit(self, rkey: RKey, etype: str, obj: Obj, old: Obj | None) -> Obj:
        rv = self.rv + 1
        meta = obj["metadata"]
        meta["resourceVersion"] = str(rv)
        key = (meta.get("namespace", ""), meta["name"])
        # persist first: if this raises, memory (and watchers) never saw the write
        self.backend.write(rv, rkey, key, None if etype == "DELETED" else obj)
        self.rv = rv
        self.revisions[rkey] = rv
        bucket = self.objects.setdefault(rkey, {})
        if etype == "DELETED":
            bucket.pop(key, None)
        else:
            bucket[key] = obj
        event = Event(rv, etype, rkey, obj, old)
        if len(self.history) >= self.history_size:
            self.floor = self.history.popleft().rv
        self.history.append(event)
        watchers = self._watchers.get(rkey)
        if watchers:
            for w in list(watchers):
                if not w.offer(event):
                    self._drop(w)
        return obj

    def create(self, rkey: RKey, obj: Obj) -> Obj:
        return self._commit(rkey, "ADDED", obj, None)

    def update(self, rkey: RKey, obj: Obj, old: Obj) -> Obj:
        return self._commit(rkey, "MODIFIED", obj, old)

    def delete(self, rkey: RKey, obj: Obj, old: Obj) -> Obj:
        """Remove the object; ``obj`` is its final state (it gets the deletion's RV)."""
        return self._commit(rkey, "DELETED", obj, old)

    # -- watches ---------------------------------------------------------------------------

    def events_since(self, rkey: RKey, since: int) -> list[Event]:
        """Events on ``rkey`` after ``since``, oldest first.

        Raises:
            HistoryExpired: events after ``since`` may have been evicted.
        """
        if since < self.floor:
            raise HistoryExpired(since, self.floor)
        out: list[Event] = []
        for event in reversed(self.history):
            if event.rv <= since:
                break
            if event.rkey == rkey:
                out.append(event)
        out.reverse()
        return out

    def add_watch(
        self, rkey: RKey, namespace: str | None, matches: Callable[[Obj], bool] | None
    ) -> Watch:
        w = Watch(rkey, namespace, matches, self.watch_buffer)
        self._watchers.setdefault(rkey, set()).add(w)
        self.watches_added += 1
        if self._watch_added is not None:
            self._watch_added.set()
            self._watch_added = None
        return w

    async def wait_watch_added(self) -> None:
        """Return after the next :meth:`add_watch`."""
        if self._watch_added is None:
            self._watch_added = anyio.Event()
        await self._watch_added.wait()

    def remove_watch(self, w: Watch) -> None:
        """Unregister ``w`` and close both ends of its stream (its reader is done)."""
        watchers = self._watchers.get(w.rkey)
        if watchers is not None:
            watchers.discard(w)
        w.send.close()
        w.receive.close()

    def _drop(self, w: Watch) -> None:
        self.dropped_watchers += 1
        watchers = self._watchers.get(w.rkey)
        if watchers is not None:
            watchers.discard(w)
        w.close()  # the reader drains what is queued, then sees the end of the stream

    def close_watches(self) -> int:
        """End every open watch (clients see a clean end of stream); returns how many."""
        count = 0
        for watchers in self._watchers.values():
            for w in list(watchers):
                w.close()
                count += 1
            watchers.clear()
        return count

    @property
    def watch_count(self) -> int:
        return sum(len(ws) for ws in self._watchers.values())

    def compact(self) -> None:
        """Forget all history: watches and continue tokens from any RV up to now get 410."""
        self.history.clear()
        self.floor = self.rv + 1

    def close(self) -> None:
        self.close_watches()
        self.backend.close()
