"""The ``EventRecorder`` protocol and the object reference an Event points at."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from kcm.models import resource_info_for
from kcm.models.core_v1 import ObjectReference

__all__ = [
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "EventRecorder",
    "object_reference",
    "validate_event",
]

EVENT_TYPE_NORMAL = "Normal"
"""Something expected happened (``v1.EventTypeNormal``)."""
EVENT_TYPE_WARNING = "Warning"
"""Something may be wrong (``v1.EventTypeWarning``)."""

_TYPES = frozenset({EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING})
_MAX_REASON = 128


@runtime_checkable
class EventRecorder(Protocol):
    """Records Kubernetes Events about objects (client-go's ``record.EventRecorder``).

    Get one from :meth:`kcm.record.EventBroadcaster.recorder` (or ``manager.event_recorder``);
    use :class:`kcm.testing.FakeRecorder` in tests.
    """

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        """Record that ``reason`` happened to ``obj``.

        Args:
            obj: the object the event is about: a typed model, ``Unstructured``,
                ``PartialObjectMetadata`` or an ``ObjectReference``. It needs a name, a kind
                and an apiVersion.
            type: ``"Normal"`` or ``"Warning"``.
            reason: a short UpperCamelCase word machines can switch on (``"SuccessfulCreate"``).
            message: what happened, for humans.

        Guarantees:
            Synchronous and cheap; never blocks, never raises. An event that cannot be recorded
            (bad type, an object without a kind, a full buffer) is logged and dropped: events
            are best-effort.
        """
        ...


def object_reference(obj: Any) -> ObjectReference:
    """The ``ObjectReference`` of ``obj``: apiVersion, kind, namespace, name, uid, resourceVersion.

    Typed models take kind from their model class; ``Unstructured`` and
    ``PartialObjectMetadata`` from their ``kind`` field. An ``ObjectReference`` is returned as is.

    Raises:
        ValueError: ``obj`` has no name, kind or apiVersion.
    """
    if isinstance(obj, ObjectReference):
        ref = obj
    else:
        meta = obj.metadata
        kind, api_version = _kind_of(obj)
        ref = ObjectReference(
            api_version=api_version,
            kind=kind,
            namespace=meta.namespace or None,
            name=meta.name,
            uid=meta.uid,
            resource_version=meta.resource_version,
        )
    if not ref.name or not ref.kind or not ref.api_version:
        raise ValueError(
            f"cannot reference {ref.kind or type(obj).__name__} {ref.name!r}: an event's object "
            "needs metadata.name, a kind and an apiVersion"
        )
    return ref


def _kind_of(obj: Any) -> tuple[str | None, str | None]:
    config = getattr(type(obj), "__struct_config__", None)
    kind: Any = None
    if config is not None and config.tag_field == "kind":
        kind = config.tag
    if not kind:
        kind = getattr(obj, "kind", None)
    api_version: Any = getattr(obj, "api_version", None)
    if not kind or not api_version:
        try:
            info = resource_info_for(type(obj))
        except KeyError:
            pass
        else:
            kind = kind or info.kind
            api_version = api_version or info.api_version
    return (str(kind) if kind else None, str(api_version) if api_version else None)


def validate_event(type: str, reason: str) -> str | None:
    """Why an event with this type and reason cannot be recorded, or None if it can."""
    if type not in _TYPES:
        return f"unsupported event type {type!r} (use 'Normal' or 'Warning')"
    if not reason:
        return "an event needs a reason"
    if len(reason) > _MAX_REASON:
        return f"event reason is longer than {_MAX_REASON} characters"
    return None
