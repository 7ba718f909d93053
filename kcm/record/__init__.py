"""Event recording: client-go's ``tools/record`` on anyio.

A controller tells what happened to an object through an :class:`EventRecorder`
(``recorder.event(obj, "Normal", "SuccessfulCreate", "Created pod: web-x")``): synchronous,
cheap and best-effort. One :class:`EventBroadcaster` per process buffers the events, runs each
through the :class:`EventCorrelator` (spam filter, aggregation of similar events, repeat
counts) and writes them as core/v1 ``Event`` objects through an :class:`EventSink`.

Independent of the informers, the work queue and the controller runtime (it needs only the
client, the models and the clock); ``kcm.runtime.Manager.event_recorder`` hands out recorders
of a broadcaster the manager runs. See docs/runtime.md ("Events").
"""

from ._event_correlator import CorrelationResult as CorrelationResult
from ._event_correlator import EventCorrelator as EventCorrelator
from ._event_recorder import EVENT_TYPE_NORMAL as EVENT_TYPE_NORMAL
from ._event_recorder import EVENT_TYPE_WARNING as EVENT_TYPE_WARNING
from ._event_recorder import EventRecorder as EventRecorder
from ._event_recorder import object_reference as object_reference
from ._events import EventBroadcaster as EventBroadcaster
from ._events import EventSink as EventSink

__all__ = [
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "CorrelationResult",
    "EventBroadcaster",
    "EventCorrelator",
    "EventRecorder",
    "EventSink",
    "object_reference",
]
