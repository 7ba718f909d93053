"""WATCH over HTTP: a backlog (initial events or a replay), then live events, as JSON lines.

The backlog and the registration of the watcher happen with no await in between, so no event
can fall between them. Live events arrive on the watcher's memory stream (fanned out by the
:class:`Store`); bookmarks are queued behind them; the stream ends at ``timeoutSeconds``, when
the client goes away, or when the store closes the watch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio
import msgspec

from kcm.clock import Clock, move_on_after

from ._faults import Faults
from ._http import JSON, Receive, Send
from ._list import parse_resource_version
from ._negotiation import Conversion, partial_object_metadata
from ._options import ListOptions
from ._registry import Resource
from ._status import StatusError
from ._store import Event, HistoryExpired, Obj, Store, Watch
from ._table import to_table

__all__ = ["WatchOptions", "WatchStream"]

_encode = msgspec.json.encode
_DEFAULT_TIMEOUT = 1800.0
_PRE_TIMEOUT_BOOKMARK = 2.0
"""Seconds before a watch's timeout at which kube-apiserver sends its last bookmark."""
_BATCH = 512
"""Lines already queued that one write may carry."""


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """What a watch stream needs of its (already validated) :class:`ListOptions`."""

    resource_version: str
    bookmarks: bool
    send_initial_events: bool | None
    timeout: float

    @property
    def send_initial(self) -> bool:
        return bool(self.send_initial_events)

    @property
    def start_rv(self) -> int:
        """The resourceVersion the watch starts after (0 for a watch from the current state)."""
        if self.send_initial or not self.resource_version.isdigit():
            return 0
        return int(self.resource_version)

    @classmethod
    def of(cls, options: ListOptions) -> WatchOptions:
        """``timeoutSeconds`` unset or 0: the server's default (kube: a random 30 to 60
        minutes)."""
        return cls(
            resource_version=options.resource_version,
            bookmarks=options.allow_watch_bookmarks,
            send_initial_events=options.send_initial_events,
            timeout=float(options.timeout_seconds or _DEFAULT_TIMEOUT),
        )


@dataclass(slots=True)
class _Backlog:
    """What a watch sends before live events: lines, or the one ERROR line of a 410."""

    lines: list[bytes]
    replay: list[Event]
    error: bytes | None = None


class WatchStream:
    """One watch response over ``store`` (a new one per request: the store can be swapped)."""

    def __init__(
        self,
        store: Store,
        present: Callable[[Resource, Obj], Obj],
        clock: Clock,
        faults: Faults,
        *,
        bookmark_interval: float,
        user_agent: str,
        conversion: Conversion | None = None,
    ) -> None:
        self.store = store
        self.present = present
        self.clock = clock
        self.faults = faults
        self.bookmark_interval = bookmark_interval
        self.user_agent = user_agent
        self.conversion = conversion

    async def serve(
        self,
        send: Send,
        receive: Receive,
        res: Resource,
        ns: str | None,
        matcher: Callable[[Obj], bool] | None,
        options: WatchOptions,
    ) -> None:
        # Synchronous from here to add_watch: no event can slip between backlog and live.
        backlog = self._backlog(res, ns, matcher, options)
        watch = None
        if backlog.error is None:
            watch = self.store.add_watch(res.storage_key, ns or None, matcher)
            for event in backlog.replay:
                line = watch.render(event)
                if line is not None:
                    backlog.lines.append(line)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", JSON), (b"cache-control", b"no-cache, private")],
            }
        )
        try:
            await self._stream(send, receive, res, watch, backlog, options)
        finally:
            if watch is not None:
                self.store.remove_watch(watch)
        try:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except Exception:  # the client went away first
            pass

    def _backlog(
        self,
        res: Resource,
        ns: str | None,
        matcher: Callable[[Obj], bool] | None,
        options: WatchOptions,
    ) -> _Backlog:
        store = self.store
        backlog = _Backlog([], [])
        if options.send_initial or options.resource_version in ("", "0"):
            if options.send_initial_events is not False:
                backlog.lines += self._initial_events(res, ns, matcher)
            if options.send_initial:
                backlog.lines.append(_bookmark(res, store.rv, initial_end=True))
            return backlog
        since = parse_resource_version(options.resource_version)
        try:
            backlog.replay = store.events_since(res.storage_key, since)
        except HistoryExpired as exc:
            err = StatusError.gone(str(exc))
            backlog.error = b'{"type":"ERROR","object":' + _encode(err.to_status()) + b"}\n"
        return backlog

    def _initial_events(
        self, res: Resource, ns: str | None, matcher: Callable[[Obj], bool] | None
    ) -> list[bytes]:
        """A synthetic ADDED for every object the watch selects, in key order."""
        objects = self.store.objects
        lines = []
        for key in sorted(objects.get(res.storage_key, {})):
            obj = objects[res.storage_key][key]
            if ns and key[0] != ns:
                continue
            if matcher is not None and not matcher(obj):
                continue
            lines.append(b'{"type":"ADDED","object":' + _encode(self.present(res, obj)) + b"}\n")
        return lines

    async def _stream(
        self,
        send: Send,
        receive: Receive,
        res: Resource,
        watch: Watch | None,
        backlog: _Backlog,
        options: WatchOptions,
    ) -> None:
        """Write the backlog and then live events until timeout, disconnect or close."""
        async with anyio.create_task_group() as tg:

            async def _disconnect() -> None:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(_disconnect)
            async with move_on_after(self.clock, options.timeout):
                try:
                    if backlog.error is not None:
                        await self._write(send, backlog.error, None)
                    else:
                        assert watch is not None
                        if backlog.lines:
                            await self._write(send, b"".join(backlog.lines), res)
                        if options.bookmarks:
                            tg.start_soon(self._bookmark_ticker, watch, options)
                        await self._pump(send, watch, res)
                except _Unconvertible:
                    pass
            tg.cancel_scope.cancel()

    async def _pump(self, send: Send, watch: Watch, res: Resource) -> None:
        receive = watch.receive
        while True:
            try:
                line = await receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            chunk = [line]
            while len(chunk) < _BATCH:  # batch whatever is already queued into one write
                try:
                    chunk.append(receive.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
            data = b"".join(
                _bookmark(res, int(item[1:])) if item.startswith(b"#") else item for item in chunk
            )
            await self._write(send, data, res)

    async def _bookmark_ticker(self, watch: Watch, options: WatchOptions) -> None:
        """Queue bookmark markers behind the events already queued, as kube-apiserver's watch
        cache sends them: every ``bookmark_interval`` and once about 2 seconds before
        ``timeoutSeconds`` ends the watch (none at all for a watch shorter than that), each
        only when the server has moved past the resourceVersion the watch started from.

        A marker carries the store's RV at the moment it is queued: every event up to that RV
        is ahead of it in this watcher's stream (fan-out is synchronous), so the BOOKMARK never
        claims an event the client has not been sent. A full buffer skips the tick.
        """
        last_call = options.timeout - _PRE_TIMEOUT_BOOKMARK
        if last_call <= 0:
            return
        elapsed = 0.0
        while elapsed < last_call:
            wait = min(self.bookmark_interval, last_call - elapsed)
            await self.clock.sleep(wait)
            elapsed += wait
            if self.store.rv <= options.start_rv:
                continue
            try:
                watch.send.send_nowait(b"#%d" % self.store.rv)
            except anyio.WouldBlock:
                continue
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return

    async def _write(self, send: Send, data: bytes, res: Resource | None) -> None:
        """One body chunk; a partitioned client's is held until the partition heals."""
        if self.faults.partitioned(self.user_agent) is not None:
            await self.faults.gate(self.user_agent)
        ended = False
        if self.conversion is not None and res is not None:
            data, ended = _convert(res, data, self.conversion, self.clock.now())
        await send({"type": "http.response.body", "body": data, "more_body": True})
        if ended:
            raise _Unconvertible()


def _bookmark(res: Resource, rv: int, *, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj = {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta}
    return b'{"type":"BOOKMARK","object":' + _encode(obj) + b"}\n"


class _Unconvertible(Exception):
    """An event's object could not take the form ``Accept`` asked for: kube-apiserver logs it
    and ends the watch."""


def _convert(
    res: Resource, data: bytes, conversion: Conversion, now: datetime
) -> tuple[bytes, bool]:
    """The events of ``data`` with their objects in the form ``Accept`` asked for, and whether
    the stream must end after them (an object asked for as a ``PartialObjectMetadataList``:
    the events before it go out). A Status (an ERROR event) is sent as it is."""
    out: list[bytes] = []
    for raw in data.splitlines():
        event = json.loads(raw)
        kind = event.get("type")
        if kind != "ERROR" and conversion.partial_list:
            return b"".join(out), True
        if kind in ("ADDED", "MODIFIED", "DELETED") and conversion.table:
            event["object"] = to_table(
                res, {"metadata": {}, "items": [event["object"]]}, "Object", now
            )
        elif kind != "ERROR" and conversion.partial:
            event["object"] = partial_object_metadata(res, event["object"], conversion)
        out.append(_encode(event) + b"\n")
    return b"".join(out), False
