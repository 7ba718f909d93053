"""When the change an Endpoints (or EndpointSlice) write reflects happened.

The annotation ``endpoints.kubernetes.io/last-change-trigger-time`` lets a consumer measure
how long a change took to reach it (the network programming latency SLI). A trigger is a
pod's Ready condition changing or the Service being created; the tracker remembers, per
Service, what it saw at the previous sync and reports the earliest trigger that is new since
(Go's ``TriggerTimeTracker``). Like Go's, it can be wrong when one object changes twice
between two syncs; that is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kcm.models import ObjectKey
from kcm.models.core_v1 import Pod, Service

from ._pod_predicates import pod_ready_condition

__all__ = [
    "LAST_CHANGE_TRIGGER_TIME_ANNOTATION",
    "TriggerTimeTracker",
    "format_trigger_time",
]

LAST_CHANGE_TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"
"""The Endpoints/EndpointSlice annotation: when the last change that triggered a sync happened."""


def format_trigger_time(when: datetime) -> str:
    """Go's ``time.RFC3339Nano`` in UTC: fractional seconds only when there are any, without
    trailing zeros (``2024-05-01T10:00:00Z``, ``2024-05-01T10:00:00.5Z``)."""
    when = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if when.microsecond:
        text += f".{when.microsecond:06d}".rstrip("0")
    return text + "Z"


@dataclass
class _ServiceState:
    service_trigger: datetime | None = None
    pod_triggers: dict[str, datetime] = field(default_factory=dict)


def _pod_trigger(pod: Pod) -> datetime | None:
    condition = pod_ready_condition(pod)
    return condition.last_transition_time if condition is not None else None


def _after(when: datetime, before: datetime | None) -> bool:
    return before is None or when > before


class TriggerTimeTracker:
    """Per Service, the trigger times seen at the last sync.

    Not safe for concurrent calls on the same Service; the work queue never syncs one key
    twice at once.
    """

    def __init__(self) -> None:
        self._states: dict[ObjectKey, _ServiceState] = {}

    def compute(self, service: Service, pods: Iterable[Pod]) -> datetime | None:
        """The trigger time to export for this sync of ``service`` with the pods it selects,
        or None (then the annotation is removed), and remember what was seen.

        A Service seen for the first time gives its creationTimestamp; afterwards the
        earliest pod Ready transition or Service creation that is newer than at the last
        sync (``ComputeEndpointLastChangeTriggerTime``).
        """
        key = ObjectKey(service.metadata.namespace or "", service.metadata.name or "")
        state = self._states.get(key)
        known = state is not None
        last = state if state is not None else _ServiceState()
        earliest: datetime | None = None
        pod_triggers: dict[str, datetime] = {}
        for pod in pods:
            when = _pod_trigger(pod)
            if when is None:
                continue
            pod_triggers[pod.metadata.name or ""] = when
            if _after(when, last.pod_triggers.get(pod.metadata.name or "")):
                earliest = when if earliest is None else min(earliest, when)
        service_trigger = service.metadata.creation_timestamp
        if service_trigger is not None and _after(service_trigger, last.service_trigger):
            earliest = service_trigger if earliest is None else min(earliest, service_trigger)
        self._states[key] = _ServiceState(service_trigger, pod_triggers)
        if not known:
            return service.metadata.creation_timestamp
        return earliest

    def delete_service(self, key: ObjectKey) -> None:
        """Forget a deleted Service."""
        self._states.pop(key, None)
