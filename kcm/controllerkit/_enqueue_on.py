"""An event handler for the informer events a kube controller listens to, and no others.

kube's controllers register ``AddFunc``, ``UpdateFunc`` or ``DeleteFunc`` for some events only
(the token cleaner ignores deletions, the ServiceAccount controller hears of ServiceAccounts
only when they are deleted) and map an update by its new object. The runtime's
:class:`~kcm.runtime.EnqueueMapped` maps every event, and an update by both objects, so each of
those controllers wrote a handler class of its own; :class:`EnqueueOn` is that class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar, final

from kcm.models import ObjectKey

__all__ = ["EnqueueOn"]

T = TypeVar("T")


@final
class EnqueueOn(Generic[T]):
    """Queue ``keys(obj)`` on the events named: an add (the object), an update (the new
    object) or a delete (its last known state); the other events queue nothing.

    Args:
        keys: ``keys(obj) -> iterable of ObjectKey``; cheap, never blocking (read listers,
            not the API).
        add: on informer adds (the initial list included).
        update: on updates (periodic resyncs included).
        delete: on deletions.

    Raises:
        ValueError: no event named (the handler would never queue anything).
    """

    def __init__(
        self,
        keys: Callable[[T], Iterable[ObjectKey]],
        *,
        add: bool = False,
        update: bool = False,
        delete: bool = False,
    ) -> None:
        if not (add or update or delete):
            raise ValueError("EnqueueOn needs at least one of add, update or delete")
        self._keys = keys
        self._add = add
        self._update = update
        self._delete = delete

    def __repr__(self) -> str:
        named = (("add", self._add), ("update", self._update), ("delete", self._delete))
        events = ", ".join(event for event, on in named if on)
        return f"<EnqueueOn {getattr(self._keys, '__name__', self._keys)} on {events}>"

    def create_keys(self, obj: T, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return self._keys(obj) if self._add else ()

    def update_keys(self, old: T, new: T) -> Iterable[ObjectKey]:
        return self._keys(new) if self._update else ()

    def delete_keys(self, obj: T, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return self._keys(obj) if self._delete else ()
