"""Predicates: decide which informer events reach a controller's queue (C13-C15, D18).

A predicate answers True (let the event through) or False (drop it) for each kind of event.
Several predicates on one watch are ANDed in order and the first False stops (C9). Combine them
with ``&``, ``|`` and ``~`` (or :func:`and_`, :func:`or_`, :func:`not_`).

Dropping an event only means no reconcile is *triggered* by it: reconcilers are level-based and
read the current state, so a later event (or a resync) still sees every change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, TypeVar, final

from kcm.selectors import LabelSelector

from ._types import HasMetadata

__all__ = [
    "Predicate",
    "PredicateFuncs",
    "and_",
    "annotations_changed",
    "generation_changed",
    "label_selector",
    "labels_changed",
    "not_",
    "or_",
    "predicate",
    "resource_version_changed",
    "spec_or_deletion_changed",
]

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)


class Predicate(Generic[T_contra]):
    """Filters events; the base class lets every event through. Override what you need.

    * ``create(obj, is_in_initial_list=...)``: an informer add (also the initial list).
    * ``update(old, new)``: a change (or a periodic resync, where ``old`` and ``new`` have
      the same resourceVersion).
    * ``delete(obj, final_state_unknown=...)``: a deletion; ``obj`` is the last known state.
    """

    def create(self, obj: T_contra, *, is_in_initial_list: bool) -> bool:
        return True

    def update(self, old: T_contra, new: T_contra) -> bool:
        return True

    def delete(self, obj: T_contra, *, final_state_unknown: bool) -> bool:
        return True

    def __and__(self, other: Predicate[T_contra]) -> Predicate[T_contra]:
        return _And((self, other))

    def __or__(self, other: Predicate[T_contra]) -> Predicate[T_contra]:
        return _Or((self, other))

    def __invert__(self) -> Predicate[T_contra]:
        return _Not(self)


@final
class PredicateFuncs(Predicate[T]):
    """A predicate from optional functions; an omitted one lets its events through (C13).

    Args:
        create: ``create(obj) -> bool``.
        update: ``update(old, new) -> bool``.
        delete: ``delete(obj) -> bool``.
    """

    def __init__(
        self,
        *,
        create: Callable[[T], bool] | None = None,
        update: Callable[[T, T], bool] | None = None,
        delete: Callable[[T], bool] | None = None,
    ) -> None:
        self._create = create
        self._update = update
        self._delete = delete

    def create(self, obj: T, *, is_in_initial_list: bool) -> bool:
        return self._create is None or self._create(obj)

    def update(self, old: T, new: T) -> bool:
        return self._update is None or self._update(old, new)

    def delete(self, obj: T, *, final_state_unknown: bool) -> bool:
        return self._delete is None or self._delete(obj)


@final
class _Filter(Predicate[T]):
    def __init__(self, keep: Callable[[T], bool]) -> None:
        self._keep = keep

    def create(self, obj: T, *, is_in_initial_list: bool) -> bool:
        return self._keep(obj)

    def update(self, old: T, new: T) -> bool:
        return self._keep(new)

    def delete(self, obj: T, *, final_state_unknown: bool) -> bool:
        return self._keep(obj)


def predicate(keep: Callable[[T], bool]) -> Predicate[T]:
    """A predicate applying ``keep`` to the object of every event (the new one for updates).

    controller-runtime's ``NewPredicateFuncs``.
    """
    return _Filter(keep)


@final
class _UpdateOnly(Predicate[HasMetadata]):
    """Creates and deletes pass; updates pass when ``changed(old, new)`` (C14)."""

    def __init__(self, name: str, changed: Callable[[HasMetadata, HasMetadata], bool]) -> None:
        self._name = name
        self._changed = changed

    def __repr__(self) -> str:
        return f"{self._name}()"

    def update(self, old: HasMetadata, new: HasMetadata) -> bool:
        return self._changed(old, new)


def _map(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return value or {}


_GENERATION = _UpdateOnly(
    "generation_changed", lambda o, n: o.metadata.generation != n.metadata.generation
)
_RESOURCE_VERSION = _UpdateOnly(
    "resource_version_changed",
    lambda o, n: o.metadata.resource_version != n.metadata.resource_version,
)
_LABELS = _UpdateOnly(
    "labels_changed", lambda o, n: _map(o.metadata.labels) != _map(n.metadata.labels)
)
_ANNOTATIONS = _UpdateOnly(
    "annotations_changed",
    lambda o, n: _map(o.metadata.annotations) != _map(n.metadata.annotations),
)


def _spec_or_deletion(old: HasMetadata, new: HasMetadata) -> bool:
    o, n = old.metadata, new.metadata
    return (
        o.generation != n.generation
        or n.deletion_timestamp is not None
        or tuple(o.finalizers or ()) != tuple(n.finalizers or ())
    )


_SPEC_OR_DELETION = _UpdateOnly("spec_or_deletion_changed", _spec_or_deletion)


def generation_changed() -> Predicate[HasMetadata]:
    """Updates pass only when ``metadata.generation`` changed (status writes are dropped).

    Caveats:
        Setting ``deletionTimestamp`` or changing finalizers does not bump the generation, so
        this predicate drops them and finalizer logic may never run (B24). Prefer
        :func:`spec_or_deletion_changed`. Some CRDs without a status subresource bump the
        generation on every write.
    """
    return _GENERATION


def spec_or_deletion_changed() -> Predicate[HasMetadata]:
    """Updates pass when the generation changed, the object is being deleted (it has a
    ``deletionTimestamp``) or its finalizers changed (D18): :func:`generation_changed`
    without its deletion trap (B24)."""
    return _SPEC_OR_DELETION


def resource_version_changed() -> Predicate[HasMetadata]:
    """Updates pass when ``metadata.resourceVersion`` changed: drops periodic resyncs."""
    return _RESOURCE_VERSION


def labels_changed() -> Predicate[HasMetadata]:
    """Updates pass when the labels changed (a missing map equals an empty one)."""
    return _LABELS


def annotations_changed() -> Predicate[HasMetadata]:
    """Updates pass when the annotations changed (a missing map equals an empty one)."""
    return _ANNOTATIONS


def label_selector(selector: LabelSelector | str | Mapping[str, str]) -> Predicate[HasMetadata]:
    """Every event passes when the object's labels match (the new object's for updates).

    Args:
        selector: a :class:`~kcm.selectors.LabelSelector`, its text form or a label map
            (exact matches).

    Raises:
        kcm.selectors.SelectorParseError: ``selector`` is text that does not parse.
    """
    if isinstance(selector, str):
        selector = LabelSelector.parse(selector)
    elif not isinstance(selector, LabelSelector):
        selector = LabelSelector.from_labels(selector)
    matches = selector.matches
    return _Filter(lambda obj: matches(obj.metadata.labels))


@final
class _And(Predicate[T]):
    def __init__(self, parts: tuple[Predicate[T], ...]) -> None:
        self._parts = parts

    def create(self, obj: T, *, is_in_initial_list: bool) -> bool:
        return all(p.create(obj, is_in_initial_list=is_in_initial_list) for p in self._parts)

    def update(self, old: T, new: T) -> bool:
        return all(p.update(old, new) for p in self._parts)

    def delete(self, obj: T, *, final_state_unknown: bool) -> bool:
        return all(p.delete(obj, final_state_unknown=final_state_unknown) for p in self._parts)


@final
class _Or(Predicate[T]):
    def __init__(self, parts: tuple[Predicate[T], ...]) -> None:
        self._parts = parts

    def create(self, obj: T, *, is_in_initial_list: bool) -> bool:
        return any(p.create(obj, is_in_initial_list=is_in_initial_list) for p in self._parts)

    def update(self, old: T, new: T) -> bool:
        return any(p.update(old, new) for p in self._parts)

    def delete(self, obj: T, *, final_state_unknown: bool) -> bool:
        return any(p.delete(obj, final_state_unknown=final_state_unknown) for p in self._parts)


@final
class _Not(Predicate[T]):
    def __init__(self, inner: Predicate[T]) -> None:
        self._inner = inner

    def create(self, obj: T, *, is_in_initial_list: bool) -> bool:
        return not self._inner.create(obj, is_in_initial_list=is_in_initial_list)

    def update(self, old: T, new: T) -> bool:
        return not self._inner.update(old, new)

    def delete(self, obj: T, *, final_state_unknown: bool) -> bool:
        return not self._inner.delete(obj, final_state_unknown=final_state_unknown)


def and_(*predicates: Predicate[T]) -> Predicate[T]:
    """Passes when every predicate passes (short-circuits; no predicates: always passes)."""
    return _And(predicates)


def or_(*predicates: Predicate[T]) -> Predicate[T]:
    """Passes when any predicate passes (short-circuits; no predicates: never passes)."""
    return _Or(predicates)


def not_(inner: Predicate[T]) -> Predicate[T]:
    """Passes when ``inner`` does not."""
    return _Not(inner)
