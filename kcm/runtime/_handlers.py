"""Event handlers: which keys an informer event should put into a controller's queue (C10-C12).

An :class:`EventHandler` maps each event to zero or more :class:`~kcm.models.ObjectKey`; the
controller wraps it (with its predicates) into an informer handler that adds those keys to the
queue. Handlers run on the informer's notification path: keep them cheap and synchronous.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar, final

from kcm.models import ObjectKey, ResourceInfo, object_key, resource_info_for

from ._predicates import Predicate
from ._types import HasMetadata

__all__ = [
    "EnqueueForObject",
    "EnqueueForOwner",
    "EnqueueMapped",
    "EventHandler",
    "QueueingHandler",
    "enqueue_mapped",
    "enqueue_object",
    "enqueue_owner",
]

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)


class EventHandler(Protocol[T_contra]):
    """Maps informer events to the keys to reconcile."""

    def create_keys(self, obj: T_contra, *, is_in_initial_list: bool) -> Iterable[ObjectKey]: ...

    def update_keys(self, old: T_contra, new: T_contra) -> Iterable[ObjectKey]: ...

    def delete_keys(self, obj: T_contra, *, final_state_unknown: bool) -> Iterable[ObjectKey]: ...


@final
class EnqueueForObject:
    """The object's own key (C10): what ``for_`` uses. For an update, the new object's key."""

    def __repr__(self) -> str:
        return "enqueue_object()"

    def create_keys(self, obj: HasMetadata, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: HasMetadata, new: HasMetadata) -> Iterable[ObjectKey]:
        return (object_key(new),)

    def delete_keys(self, obj: HasMetadata, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)


def _group_of(api_version: str | None) -> str:
    return (api_version or "").rpartition("/")[0]


@final
class EnqueueForOwner:
    """The keys of the object's owners of one kind (C11): what ``owns`` uses.

    An owner reference matches when its group and kind equal the owner type's (the version is
    ignored). The key is ``(child namespace, ref.name)`` for a namespaced owner kind and
    ``("", ref.name)`` for a cluster-scoped one. An update maps both the old and the new object,
    so removing an owner reference still reconciles the former owner.

    Args:
        owner: the owner's model class (or its ``ResourceInfo``).
        only_controller: only the reference with ``controller: true`` (the default, as the
            builder's ``Owns``); False matches every owner reference of that kind.

    Raises:
        KeyError: ``owner`` is a class that is not a registered kind.
    """

    def __init__(self, owner: type[Any] | ResourceInfo, *, only_controller: bool = True) -> None:
        info = owner if isinstance(owner, ResourceInfo) else resource_info_for(owner)
        self._group = info.group
        self._kind = info.kind
        self._namespaced = info.namespaced
        self._only_controller = only_controller

    def __repr__(self) -> str:
        return f"enqueue_owner({self._kind!r}, only_controller={self._only_controller})"

    def _keys(self, obj: HasMetadata) -> list[ObjectKey]:
        meta = obj.metadata
        refs = meta.owner_references
        if not refs:
            return []
        namespace = (meta.namespace or "") if self._namespaced else ""
        keys: list[ObjectKey] = []
        for ref in refs:
            if ref.kind != self._kind or _group_of(ref.api_version) != self._group:
                continue
            if self._only_controller and not ref.controller:
                continue
            if ref.name:
                keys.append(ObjectKey(namespace, ref.name))
        return keys

    def create_keys(self, obj: HasMetadata, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return self._keys(obj)

    def update_keys(self, old: HasMetadata, new: HasMetadata) -> Iterable[ObjectKey]:
        return dict.fromkeys([*self._keys(old), *self._keys(new)])

    def delete_keys(self, obj: HasMetadata, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return self._keys(obj)


@final
class EnqueueMapped(Generic[T]):
    """Keys computed by a function of the object (C12); an update maps old and new, deduplicated.

    Args:
        mapper: ``mapper(obj) -> iterable of ObjectKey``; it must be cheap and must not block
            (read listers, never the API).
    """

    def __init__(self, mapper: Callable[[T], Iterable[ObjectKey]]) -> None:
        self._mapper = mapper

    def create_keys(self, obj: T, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return self._mapper(obj)

    def update_keys(self, old: T, new: T) -> Iterable[ObjectKey]:
        return dict.fromkeys([*self._mapper(old), *self._mapper(new)])

    def delete_keys(self, obj: T, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return self._mapper(obj)


def enqueue_object() -> EnqueueForObject:
    """Reconcile the object itself (:class:`EnqueueForObject`)."""
    return EnqueueForObject()


def enqueue_owner(
    owner: type[Any] | ResourceInfo, *, only_controller: bool = True
) -> EnqueueForOwner:
    """Reconcile the object's owner of kind ``owner`` (:class:`EnqueueForOwner`)."""
    return EnqueueForOwner(owner, only_controller=only_controller)


def enqueue_mapped(mapper: Callable[[T], Iterable[ObjectKey]]) -> EnqueueMapped[T]:
    """Reconcile the keys ``mapper(obj)`` returns (:class:`EnqueueMapped`)."""
    return EnqueueMapped(mapper)


@final
class QueueingHandler(Generic[T]):
    """An informer :class:`~kcm.informers.ResourceEventHandler`: predicates, then keys, then
    ``add(key)`` for each key.

    Predicates are ANDed in order; the first False drops the event (C9).
    """

    __slots__ = ("_add", "_handler", "_predicates")

    def __init__(
        self,
        handler: EventHandler[T],
        add: Callable[[ObjectKey], None],
        predicates: Sequence[Predicate[T]] = (),
    ) -> None:
        self._handler = handler
        self._add = add
        self._predicates = tuple(predicates)

    def on_add(self, obj: T, *, is_in_initial_list: bool) -> None:
        for p in self._predicates:
            if not p.create(obj, is_in_initial_list=is_in_initial_list):
                return
        for key in self._handler.create_keys(obj, is_in_initial_list=is_in_initial_list):
            self._add(key)

    def on_update(self, old: T, new: T) -> None:
        for p in self._predicates:
            if not p.update(old, new):
                return
        for key in self._handler.update_keys(old, new):
            self._add(key)

    def on_delete(self, obj: T, *, final_state_unknown: bool) -> None:
        for p in self._predicates:
            if not p.delete(obj, final_state_unknown=final_state_unknown):
                return
        for key in self._handler.delete_keys(obj, final_state_unknown=final_state_unknown):
            self._add(key)
