"""client-go's event correlator: spam filter, aggregation of similar events, repeat counting.

Pure and synchronous (the clock is only read): the broadcaster runs every event through
:meth:`EventCorrelator.correlate` before writing it, and reports the server's answer back with
:meth:`EventCorrelator.update_state`. Semantics follow client-go ``tools/record/events_cache.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, final

import msgspec
from cachetools import LRUCache

from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.models import format_time
from kcm.models.core_v1 import Event, EventSource, ObjectReference

__all__ = [
    "AGGREGATE_MESSAGE_PREFIX",
    "CorrelationResult",
    "EventCorrelator",
]

AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): "
"""Prefix of an aggregated event's message (client-go's ``EventAggregatorByReasonMessageFunc``)."""

_LRU_SIZE = 4096
_SPAM_BURST = 25
_SPAM_QPS = 1.0 / 300.0
_AGGREGATE_MAX_EVENTS = 10
_AGGREGATE_INTERVAL = 600.0

_Key = tuple[Any, ...]


def _source(event: Event) -> EventSource:
    return event.source or EventSource()


def _involved(event: Event) -> ObjectReference:
    return event.involved_object or ObjectReference()


def _spam_key(event: Event) -> _Key:
    """Source and object (client-go ``getSpamKey``)."""
    src, ref = _source(event), _involved(event)
    return (src.component, src.host, ref.kind, ref.namespace, ref.name, ref.uid, ref.api_version)


def _event_key(event: Event) -> _Key:
    """What makes two events "the same": source, object, type, reason, message (``getEventKey``)."""
    src, ref = _source(event), _involved(event)
    return (
        "event",
        src.component,
        src.host,
        ref.kind,
        ref.namespace,
        ref.name,
        ref.field_path,
        ref.uid,
        ref.api_version,
        event.type,
        event.reason,
        event.message,
    )


def _aggregate_key(event: Event) -> tuple[_Key, str]:
    """Similar events differ only in their message (``EventAggregatorByReasonFunc``)."""
    src, ref = _source(event), _involved(event)
    key = (
        "aggregate",
        src.component,
        src.host,
        ref.kind,
        ref.namespace,
        ref.name,
        ref.uid,
        ref.api_version,
        event.type,
        event.reason,
        event.reporting_component,
        event.reporting_instance,
    )
    return key, event.message or ""


@final
class _TokenBucket:
    """A token bucket on an injected monotonic time (``flowcontrol`` ``TryAccept``)."""

    __slots__ = ("_burst", "_last", "_qps", "_tokens")

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self._qps = qps
        self._burst = float(burst)
        self._tokens = float(burst)
        self._last = now

    def try_accept(self, now: float) -> bool:
        self._tokens = min(self._burst, self._tokens + max(0.0, now - self._last) * self._qps)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


@dataclass(slots=True)
class _AggregateRecord:
    local_keys: set[str] = field(default_factory=set)
    last: float = 0.0


@dataclass(frozen=True, slots=True)
class _Observation:
    count: int
    first_timestamp: datetime | None
    name: str | None
    resource_version: str | None


@final
@dataclass(frozen=True, slots=True)
class CorrelationResult:
    """What to do with one event.

    Attributes:
        event: the event to write (count, name and timestamps already correlated); ``None``
            when ``skip``.
        patch: a JSON merge patch (``count``, ``lastTimestamp``, ``message``) for the existing
            Event named ``event.metadata.name``, or ``None`` to create ``event``.
        key: the correlation key to pass back to :meth:`EventCorrelator.update_state`.
        skip: the spam filter dropped the event: write nothing.
    """

    event: Event | None
    patch: dict[str, Any] | None
    key: _Key
    skip: bool = False


@final
class EventCorrelator:
    """Filters, aggregates and counts events before they are written (client-go's semantics).

    For each event, in this order:

    1. **Aggregation.** Events from one source about one object with the same type and reason
       but different messages are *similar*. When ``aggregate_max_events`` distinct messages
       have been seen with no gap longer than ``aggregate_interval`` seconds, the event is
       replaced by one aggregated event whose message is ``"(combined from similar events): "``
       plus the latest message; further similar events count up that aggregated event.
    2. **Counting.** An event identical to an earlier one (source, object, type, reason,
       message) becomes a patch of the earlier Event: ``count`` + 1, a new ``lastTimestamp``,
       the original name and ``firstTimestamp``.
    3. **Spam filter.** A token bucket per source and object (``spam_burst`` events, refilled
       at ``spam_qps`` per second: 25 and one per 5 minutes by default) drops the excess. As in
       client-go, a dropped repeat still counts, so the next written patch carries the total.

    State lives in LRU caches of ``lru_size`` entries each, so memory stays bounded.

    Args:
        clock: time for the aggregation window, the token buckets and aggregated timestamps.
        lru_size: entries per cache.
        spam_burst: events one source may write about one object at once.
        spam_qps: refill rate of that bucket, in events per second.
        aggregate_max_events: distinct similar messages before aggregation.
        aggregate_interval: seconds without a similar event after which the count restarts.

    Caveats:
        Not thread-safe; call it from one task (the broadcaster does).
    """

    def __init__(
        self,
        *,
        clock: Clock = SYSTEM_CLOCK,
        lru_size: int = _LRU_SIZE,
        spam_burst: int = _SPAM_BURST,
        spam_qps: float = _SPAM_QPS,
        aggregate_max_events: int = _AGGREGATE_MAX_EVENTS,
        aggregate_interval: float = _AGGREGATE_INTERVAL,
    ) -> None:
        if lru_size < 1 or spam_burst < 1 or aggregate_max_events < 1:
            raise ValueError("lru_size, spam_burst and aggregate_max_events must be at least 1")
        if spam_qps <= 0 or aggregate_interval <= 0:
            raise ValueError("spam_qps and aggregate_interval must be positive")
        self._clock = clock
        self._spam_burst = spam_burst
        self._spam_qps = spam_qps
        self._max_events = aggregate_max_events
        self._interval = aggregate_interval
        self._buckets: LRUCache[_Key, _TokenBucket] = LRUCache(lru_size)
        self._aggregates: LRUCache[_Key, _AggregateRecord] = LRUCache(lru_size)
        self._observations: LRUCache[_Key, _Observation] = LRUCache(lru_size)

    def correlate(self, event: Event) -> CorrelationResult:
        """Aggregate, count and filter ``event`` (a new Event with ``count`` 1).

        Returns:
            What to write; see :class:`CorrelationResult`.
        """
        aggregated, key = self._aggregate(event)
        observed, patch = self._observe(aggregated, key)
        if self._spam_filtered(observed):
            return CorrelationResult(None, None, key, skip=True)
        return CorrelationResult(observed, patch, key)

    def update_state(self, key: _Key, event: Event) -> None:
        """Remember the Event the server returned for ``key`` (its name, count, version)."""
        self._observations[key] = _Observation(
            count=event.count or 1,
            first_timestamp=event.first_timestamp,
            name=event.metadata.name,
            resource_version=event.metadata.resource_version,
        )

    # -- the three stages ----------------------------------------------------------------

    def _aggregate(self, event: Event) -> tuple[Event, _Key]:
        now = self._clock.monotonic()
        agg_key, local_key = _aggregate_key(event)
        record = self._aggregates.get(agg_key)
        if record is None or now - record.last > self._interval:
            record = _AggregateRecord()
        record.local_keys.add(local_key)
        record.last = now
        self._aggregates[agg_key] = record
        if len(record.local_keys) < self._max_events:
            return event, _event_key(event)
        record.local_keys.pop()  # never grow past the threshold (client-go pops any one)
        # The incoming event's name is already unique; the aggregate takes it over.
        stamp = _seconds(self._clock.now())
        aggregated = Event(
            metadata=msgspec.structs.replace(
                event.metadata, resource_version=None, annotations=None
            ),
            count=1,
            first_timestamp=stamp,
            last_timestamp=stamp,
            involved_object=event.involved_object,
            message=AGGREGATE_MESSAGE_PREFIX + (event.message or ""),
            type=event.type,
            reason=event.reason,
            source=event.source,
            reporting_component=event.reporting_component,
            reporting_instance=event.reporting_instance,
        )
        return aggregated, agg_key

    def _observe(self, event: Event, key: _Key) -> tuple[Event, dict[str, Any] | None]:
        patch: dict[str, Any] | None = None
        last = self._observations.get(key)
        if last is not None and last.count > 0:
            event = msgspec.structs.replace(
                event,
                metadata=msgspec.structs.replace(
                    event.metadata, name=last.name, resource_version=last.resource_version
                ),
                first_timestamp=last.first_timestamp,
                count=last.count + 1,
            )
            patch = {"count": event.count}
            if event.last_timestamp is not None:
                patch["lastTimestamp"] = format_time(event.last_timestamp)
            if event.message:
                patch["message"] = event.message
        self._observations[key] = _Observation(
            count=event.count or 1,
            first_timestamp=event.first_timestamp,
            name=event.metadata.name,
            resource_version=event.metadata.resource_version,
        )
        return event, patch

    def _spam_filtered(self, event: Event) -> bool:
        now = self._clock.monotonic()
        key = _spam_key(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _TokenBucket(self._spam_qps, self._spam_burst, now)
        accepted = bucket.try_accept(now)
        self._buckets[key] = bucket
        return not accepted


def _seconds(value: datetime) -> datetime:
    """``metav1.Time`` has second precision."""
    return value.replace(microsecond=0)
