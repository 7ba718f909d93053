"""``FakeRecorder``: an event recorder that keeps events in a list for assertions."""

from __future__ import annotations

from typing import Any, final

__all__ = ["FakeRecorder"]

_TYPES = ("Normal", "Warning")


@final
class FakeRecorder:
    """An :class:`kcm.record.EventRecorder` for tests (controller-runtime's ``FakeRecorder``).

    Each event is appended to :attr:`events` as ``"<type> <reason> <message>"`` and its object
    to :attr:`objects`::

        recorder = FakeRecorder()
        controller = ReplicaSetController(client, factory, recorder=recorder)
        ...
        assert "Normal SuccessfulCreate Created pod: web-abc12" in recorder.events

    Args:
        strict: raise ``ValueError`` for a type other than ``Normal``/``Warning`` or an empty
            reason, so tests catch what the real recorder would only log and drop.
    """

    def __init__(self, *, strict: bool = True) -> None:
        self.strict = strict
        self.events: list[str] = []
        self.objects: list[Any] = []

    def __repr__(self) -> str:
        return f"FakeRecorder({len(self.events)} events)"

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        """Record ``"<type> <reason> <message>"``.

        Raises:
            ValueError: (``strict`` only) the type is not Normal/Warning or the reason is empty.
        """
        if self.strict and (type not in _TYPES or not reason):
            raise ValueError(
                f"invalid event {type!r} {reason!r}: type must be 'Normal' or 'Warning' and "
                "reason non-empty (the real recorder would drop it)"
            )
        self.events.append(f"{type} {reason} {message}")
        self.objects.append(obj)

    def clear(self) -> None:
        """Forget every recorded event."""
        self.events.clear()
        self.objects.clear()
