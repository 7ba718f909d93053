"""The event broadcaster: recorders put Events into one bounded buffer, ``run()`` writes them.

client-go's ``record.EventBroadcaster`` with ``StartRecordingToSink`` and ``StartLogging``:
recording is synchronous and never blocks (a full buffer drops the event), and one task
correlates each event (:class:`EventCorrelator`) and writes it as core/v1 ``Event``, creating
new ones and patching repeats, retrying transient failures a bounded number of times.
"""

from __future__ import annotations

import logging
import random
import weakref
from collections import deque
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, final

import anyio
import msgspec
from prometheus_client import CollectorRegistry, Counter, Gauge

from kcm.clock import SYSTEM_CLOCK, Clock, move_on_after
from kcm.errors import AlreadyExists, Forbidden, KcmError, NotFound
from kcm.models.core_v1 import Event, EventSource, ObjectReference
from kcm.models.meta_v1 import ObjectMeta

from ._event_correlator import CorrelationResult, EventCorrelator
from ._event_recorder import EventRecorder, object_reference, validate_event

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

    from kcm.client import Api, ApiClient

__all__ = ["EventBroadcaster", "EventSink"]

log = logging.getLogger(__name__)

_QUEUE_SIZE = 1000  # client-go maxQueuedEvents
_MAX_TRIES = 12  # client-go maxTriesPerEvent
_RETRY_INTERVAL = 10.0  # client-go defaultSleepDuration
_MAX_NAME = 253
_NAMESPACE_TERMINATING = "NamespaceTerminating"


class EventSink(Protocol):
    """Where Events are written (client-go ``EventSink``); the default writes through a client."""

    async def create(self, event: Event) -> Event:
        """Create ``event`` in its namespace and return what the server stored."""
        ...

    async def patch(self, event: Event, patch: dict[str, Any]) -> Event:
        """Merge-patch the existing Event named like ``event`` and return the result."""
        ...


@final
class _ClientSink:
    def __init__(self, client: ApiClient) -> None:
        self._client = client
        self._apis: dict[str | None, Api[Event]] = {}

    def _api(self, namespace: str | None) -> Api[Event]:
        api = self._apis.get(namespace)
        if api is None:
            if len(self._apis) >= 1024:  # bounded: namespaces come and go
                self._apis.clear()
            api = self._apis[namespace] = self._client.api(Event, namespace)
        return api

    async def create(self, event: Event) -> Event:
        return await self._api(event.metadata.namespace).create(event)

    async def patch(self, event: Event, patch: dict[str, Any]) -> Event:
        api = self._api(event.metadata.namespace)
        return await api.patch(event.metadata.name or "", patch)


@final
class _Metrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.dropped = Counter(
            "kcm_events_dropped_total",
            "Events not written, by reason (queue_full, invalid, spam_filtered, write_failed)",
            ["reason"],
            registry=registry,
        )
        self.written = Counter(
            "kcm_events_written_total",
            "Events written to the API server, by verb (create, patch)",
            ["verb"],
            registry=registry,
        )
        self.broadcasters: weakref.WeakSet[EventBroadcaster] = weakref.WeakSet()
        pending = Gauge(
            "kcm_events_pending",
            "Events recorded and not yet written or dropped (buffered or being written)",
            registry=registry,
        )
        pending.set_function(lambda: sum(b.unwritten for b in tuple(self.broadcasters)))


_metrics: weakref.WeakKeyDictionary[CollectorRegistry, _Metrics] = weakref.WeakKeyDictionary()


def _metrics_for(registry: CollectorRegistry) -> _Metrics:
    found = _metrics.get(registry)
    if found is None:
        found = _metrics[registry] = _Metrics(registry)
    return found


@final
class _Recorder:
    """An :class:`EventRecorder` with a fixed source, feeding one broadcaster."""

    __slots__ = ("_broadcaster", "_source")

    def __init__(self, broadcaster: EventBroadcaster, source: EventSource) -> None:
        self._broadcaster = broadcaster
        self._source = source

    def __repr__(self) -> str:
        return f"EventRecorder(component={self._source.component!r})"

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        try:
            self._broadcaster._record(obj, self._source, type, reason, message)
        except Exception:  # never raise into a reconciler: events are best-effort
            log.exception("unable to record event %s %s (will not retry)", type, reason)


@final
class EventBroadcaster:
    """Writes the Events its recorders record, as client-go's event broadcaster does.

    One broadcaster per process is enough (the manager owns one); each component gets its own
    :meth:`recorder`. ``run()`` is the only task that talks to the API server.

    What happens to an event:

    * ``recorder.event(...)`` validates it (type ``Normal``/``Warning``, a reason, an object
      with name, kind and apiVersion; else logged and dropped), builds the core/v1 Event (name
      ``<object name>.<unique hex>``, the object's namespace or ``default`` for cluster-scoped
      objects, ``count`` 1, timestamps from the clock) and appends it to a buffer of
      ``queue_size`` events. A full buffer drops the event (counted, logged): recording never
      blocks, even when the server is slow or ``run()`` is not running yet.
    * ``run()`` takes events in order, logs each at DEBUG, passes it through the
      :class:`EventCorrelator` (aggregation, repeat counting, spam filter) and writes it:
      a repeat is a merge patch of ``count``/``lastTimestamp``/``message`` (a create if that
      Event is gone), anything else a create.
    * A write that fails with a retryable error (unreachable server, 429, 5xx) is tried up to
      ``max_tries`` times, ``retry_interval`` seconds apart (the first wait randomised in
      ``[0, retry_interval)``); then the event is logged and dropped. Other failures (invalid,
      forbidden, already exists, a terminating namespace) drop it at once.

    Args:
        client: the API client to write through (ignored when ``sink`` is given).
        clock: timestamps, correlation windows and retry sleeps.
        queue_size: events buffered before new ones are dropped (client-go: 1000).
        max_tries: write attempts per event (client-go: 12).
        retry_interval: seconds between attempts (client-go: 10).
        shutdown_timeout: on cancellation, how long to keep writing buffered events (one
            attempt each); 0 drops them.
        correlator: a tuned :class:`EventCorrelator` (default: client-go's settings on ``clock``).
        registry: a Prometheus registry for ``kcm_events_dropped_total{reason}`` and
            ``kcm_events_written_total{verb}``.
        sink: where to write instead of ``client`` (tests, other transports).

    Guarantees:
        Never raises out of ``run()`` for a failed write, and never blocks a recorder. Events
        from one broadcaster are written one at a time, in the order they were recorded.

    Caveats:
        Call recorders from the event loop's thread. Events are best-effort: buffered events
        are lost if the process dies, and a failing server delays all later events (as in
        client-go, a single writer retries in order).
    """

    def __init__(
        self,
        client: ApiClient | None,
        *,
        clock: Clock = SYSTEM_CLOCK,
        queue_size: int = _QUEUE_SIZE,
        max_tries: int = _MAX_TRIES,
        retry_interval: float = _RETRY_INTERVAL,
        shutdown_timeout: float = 5.0,
        correlator: EventCorrelator | None = None,
        registry: CollectorRegistry | None = None,
        sink: EventSink | None = None,
    ) -> None:
        if queue_size < 1 or max_tries < 1:
            raise ValueError("queue_size and max_tries must be at least 1")
        if sink is None:
            if client is None:
                raise ValueError("EventBroadcaster needs a client or a sink")
            sink = _ClientSink(client)
        self._sink: EventSink = sink
        self._clock = clock
        self._queue_size = queue_size
        self._max_tries = max_tries
        self._retry_interval = retry_interval
        self._shutdown_timeout = shutdown_timeout
        self._correlator = correlator or EventCorrelator(clock=clock)
        self._metrics = _metrics_for(registry) if registry is not None else None
        if self._metrics is not None:
            self._metrics.broadcasters.add(self)
        self._queue: deque[Event] = deque()
        self._wakeup: anyio.Event | None = None
        self._idle: anyio.Event | None = None
        self._busy = False
        self._running = False
        self._last_suffix = 0
        self._dropped = 0
        self._overflowing = False
        self._in_flight: Event | None = None

    def __repr__(self) -> str:
        return f"EventBroadcaster(pending={len(self._queue)}, dropped={self._dropped})"

    # -- recording (synchronous) -----------------------------------------------------------

    def recorder(self, component: str, host: str = "") -> EventRecorder:
        """A recorder whose events name ``component`` (and ``host``) as their source.

        Args:
            component: the controller's name (``"replicaset-controller"``); becomes
                ``source.component`` and ``reportingComponent``.
            host: the node or instance name, if any (``source.host``, ``reportingInstance``).

        Raises:
            ValueError: ``component`` is empty.
        """
        if not component:
            raise ValueError("an event recorder needs a component name")
        return _Recorder(self, EventSource(component=component, host=host or None))

    @property
    def dropped(self) -> int:
        """Events dropped because the buffer was full, since construction."""
        return self._dropped

    @property
    def pending(self) -> int:
        """Events buffered and not yet taken by ``run()``."""
        return len(self._queue)

    @property
    def unwritten(self) -> int:
        """Events buffered or being written (``kcm_events_pending``)."""
        return len(self._queue) + self._busy

    def _record(self, obj: Any, source: EventSource, type: str, reason: str, message: str) -> None:
        problem = validate_event(type, reason)
        if problem is not None:
            log.error("dropping event %s %s: %s", type, reason, problem)
            self._count_drop("invalid")
            return
        try:
            ref = object_reference(obj)
        except (ValueError, AttributeError) as exc:
            log.error("dropping event %s %s %r: %s", type, reason, message, exc)
            self._count_drop("invalid")
            return
        if len(self._queue) >= self._queue_size:
            self._dropped += 1
            self._count_drop("queue_full")
            # One ERROR per overflow episode, not one per event: a flood must not flood the log.
            log.log(
                logging.DEBUG if self._overflowing else logging.ERROR,
                "unable to record event: too many queued events (%d), dropped %s %s about %s %s "
                "(%d dropped so far)",
                len(self._queue),
                type,
                reason,
                ref.kind,
                ref.name,
                self._dropped,
            )
            self._overflowing = True
            return
        self._overflowing = False
        self._queue.append(self._make_event(ref, source, type, reason, str(message)))
        if self._wakeup is not None:
            self._wakeup.set()

    def _make_event(
        self, ref: ObjectReference, source: EventSource, type: str, reason: str, message: str
    ) -> Event:
        now = self._clock.now()
        stamp = now.replace(microsecond=0)
        suffix = f".{self._unique_suffix(now):x}"
        name = (ref.name or "")[: _MAX_NAME - len(suffix)] + suffix
        return Event(
            metadata=ObjectMeta(name=name, namespace=ref.namespace or "default"),
            involved_object=ref,
            reason=reason,
            message=message,
            first_timestamp=stamp,
            last_timestamp=stamp,
            count=1,
            type=type,
            source=source,
            reporting_component=source.component,
            reporting_instance=source.host,
        )

    def _unique_suffix(self, now: datetime) -> int:
        """Nanoseconds since the epoch, bumped so that no two events share one (fake clocks)."""
        nanos = int(now.timestamp()) * 1_000_000_000 + now.microsecond * 1000
        self._last_suffix = max(nanos, self._last_suffix + 1)
        return self._last_suffix

    def _count_drop(self, reason: str) -> None:
        if self._metrics is not None:
            self._metrics.dropped.labels(reason).inc()

    # -- writing (the run task) ------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Write buffered and future events until cancelled; ready at once.

        On cancellation, buffered events get one write attempt each for up to
        ``shutdown_timeout`` seconds (shielded), then the rest are dropped.

        Raises:
            RuntimeError: ``run()`` is already running.
        """
        if self._running:
            raise RuntimeError("this EventBroadcaster is already running")
        self._running = True
        try:
            task_status.started()
            while True:
                await self._next()
                self._busy = True
                try:
                    await self._write_next(retry=True)
                finally:
                    self._busy = False
                    self._notify_idle()
        finally:
            self._wakeup = None
            self._drop_in_flight()
            with anyio.CancelScope(shield=True):
                await self._drain()
            self._running = False

    async def wait_idle(self) -> None:
        """Wait until every buffered event has been written or dropped by a running ``run()``."""
        while self._queue or self._busy:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    async def _next(self) -> None:
        while not self._queue:
            self._notify_idle()
            self._wakeup = anyio.Event()
            await self._wakeup.wait()
        self._wakeup = None

    def _notify_idle(self) -> None:
        if self._idle is not None and not self._queue and not self._busy:
            self._idle.set()
            self._idle = None

    async def _drain(self) -> None:
        if not self._queue:
            return
        if self._shutdown_timeout > 0:
            async with move_on_after(self._clock, self._shutdown_timeout):
                while self._queue:
                    await self._write_next(retry=False)
        self._drop_in_flight()
        if self._queue:
            log.error("event broadcaster shut down: dropping %d buffered events", len(self._queue))
            for _ in range(len(self._queue)):
                self._count_drop("write_failed")
            self._queue.clear()
        self._notify_idle()

    async def _write_next(self, *, retry: bool) -> None:
        event = self._in_flight = self._queue.popleft()
        try:
            await self._write(event, retry=retry)
        except Exception:  # a bug must cost one event, never the broadcaster
            log.exception(
                "dropping event %s %s after an unexpected error", event.type, event.reason
            )
            self._count_drop("write_failed")
        self._in_flight = None

    def _drop_in_flight(self) -> None:
        """Count the event whose write was cancelled (shutdown) as dropped."""
        event, self._in_flight = self._in_flight, None
        if event is not None:
            log.error("event broadcaster shut down while writing %s %s", event.type, event.reason)
            self._count_drop("write_failed")

    async def _write(self, event: Event, *, retry: bool) -> None:
        ref = event.involved_object or ObjectReference()
        log.debug(
            "Event(%s %s/%s): type: %r reason: %r %s",
            ref.kind,
            ref.namespace or "",
            ref.name,
            event.type,
            event.reason,
            event.message,
            extra={"component": event.reporting_component},
        )
        result = self._correlator.correlate(event)
        if result.skip or result.event is None:
            log.debug("event %s %s about %s spam-filtered", event.type, event.reason, ref.name)
            self._count_drop("spam_filtered")
            return
        tries = 0
        while not await self._write_once(result):
            tries += 1
            if not retry or tries >= self._max_tries:
                log.error(
                    "unable to write event %s %s about %s %s/%s (gave up after %d tries)",
                    event.type,
                    event.reason,
                    ref.kind,
                    ref.namespace or "",
                    ref.name,
                    tries,
                )
                self._count_drop("write_failed")
                return
            delay = self._retry_interval
            if tries == 1:  # spread clients out when a server comes back
                delay *= random.random()
            await self._clock.sleep(delay)

    async def _write_once(self, result: CorrelationResult) -> bool:
        """One attempt; True when done (written, or dropped for good), False to retry."""
        event = result.event
        assert event is not None
        try:
            written: Event | None = None
            verb = "patch"
            if result.patch is not None:
                try:
                    written = await self._sink.patch(event, result.patch)
                except NotFound:
                    written = None  # someone deleted it (or it was never written): create
            if written is None:
                verb = "create"
                meta = msgspec.structs.replace(event.metadata, resource_version=None)
                written = await self._sink.create(msgspec.structs.replace(event, metadata=meta))
        except KcmError as exc:
            if exc.retryable:
                log.warning(
                    "unable to write event %s %s: %s (may retry)", event.type, event.reason, exc
                )
                return False
            self._log_rejected(event, exc)
            self._count_drop("write_failed")
            return True
        except Exception:
            log.exception("unable to write event %s %s (will not retry)", event.type, event.reason)
            self._count_drop("write_failed")
            return True
        self._correlator.update_state(result.key, written)
        if self._metrics is not None:
            self._metrics.written.labels(verb).inc()
        return True

    @staticmethod
    def _log_rejected(event: Event, exc: KcmError) -> None:
        terminating = isinstance(exc, Forbidden) and any(
            cause.reason == _NAMESPACE_TERMINATING for cause in exc.causes
        )
        level = logging.DEBUG if isinstance(exc, AlreadyExists) or terminating else logging.ERROR
        log.log(
            level,
            "server rejected event %s %s: %s (will not retry)",
            event.type,
            event.reason,
            exc,
        )
