"""Listers: typed, read-only views over an informer's :class:`Indexer`."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Generic, Protocol, TypeVar, final

from kcm.errors import NotFound
from kcm.models import ObjectKey
from kcm.selectors import LabelSelector

from ._indexer import NAMESPACE_INDEX, Indexer
from ._types import KubeObject

__all__ = ["Lister", "NamespaceLister", "Selector"]

T = TypeVar("T", bound=KubeObject)


class Selector(Protocol):
    """Anything that matches a label map (``kcm.selectors.LabelSelector`` does)."""

    def matches(self, labels: Mapping[str, str], /) -> bool: ...


_EMPTY: Mapping[str, str] = {}


def _matcher(selector: Selector | Mapping[str, str] | str | None) -> Selector | None:
    if selector is None:
        return None
    if isinstance(selector, str):
        if not selector.strip():
            return None
        return LabelSelector.parse(selector)
    if isinstance(selector, Mapping):
        if not selector:
            return None
        return _EqualitySelector(selector)
    return selector


class _EqualitySelector:
    __slots__ = ("_required",)

    def __init__(self, required: Mapping[str, str]) -> None:
        self._required = tuple(required.items())

    def matches(self, labels: Mapping[str, str], /) -> bool:
        return all(labels.get(k) == v for k, v in self._required)


def _select(objects: list[T], selector: Selector | Mapping[str, str] | str | None) -> list[T]:
    matcher = _matcher(selector)
    if matcher is None:
        return objects  # no label matching at all (S10: the fast path)
    return [o for o in objects if matcher.matches(o.metadata.labels or _EMPTY)]


@final
class Lister(Generic[T]):
    """A typed read-only view over an informer cache.

    Objects are the cached frozen instances, never copies: they cannot be modified in place;
    use ``msgspec.structs.replace`` to make a changed copy for a write.

    Args:
        indexer: the informer's cache.
        resource: the resource name used in NotFound errors (e.g. ``"pods"``).
    """

    def __init__(self, indexer: Indexer[T], *, resource: str = "object") -> None:
        self._indexer = indexer
        self._resource = resource

    def get(self, namespace: str | None, name: str) -> T:
        """The object ``namespace/name`` (pass None or "" for cluster-scoped objects).

        Raises:
            kcm.errors.NotFound: not in the cache (not retryable as such: the cache may simply
                not have caught up yet).
        """
        obj = self._indexer.get(ObjectKey(namespace or "", name))
        if obj is None:
            where = f"{namespace}/{name}" if namespace else name
            raise NotFound(
                f'{self._resource} "{where}" not found in the informer cache', reason="NotFound"
            )
        return obj

    def get_or_none(self, namespace: str | None, name: str) -> T | None:
        """Like :meth:`get` but returns None when the object is not cached."""
        return self._indexer.get(ObjectKey(namespace or "", name))

    def list(self, selector: Selector | Mapping[str, str] | str | None = None) -> builtins.list[T]:
        """Every cached object whose labels match ``selector`` (all when None or empty).

        ``selector`` is a ``LabelSelector``, a label-selector string, or a dict of required
        label values.
        """
        return _select(self._indexer.list(), selector)

    def namespace(self, namespace: str) -> NamespaceLister[T]:
        """A view restricted to one namespace."""
        return NamespaceLister(self._indexer, namespace, resource=self._resource)

    def by_index(self, index_name: str, value: str) -> builtins.list[T]:
        """Objects indexed under ``value`` in ``index_name`` (see :meth:`Indexer.by_index`)."""
        return self._indexer.by_index(index_name, value)


@final
class NamespaceLister(Generic[T]):
    """A typed read-only view over one namespace of an informer cache."""

    def __init__(self, indexer: Indexer[T], namespace: str, *, resource: str = "object") -> None:
        self._indexer = indexer
        self._namespace = namespace
        self._resource = resource

    @property
    def namespace(self) -> str:
        return self._namespace

    def get(self, name: str) -> T:
        """The object ``name`` in this namespace.

        Raises:
            kcm.errors.NotFound: not in the cache.
        """
        obj = self._indexer.get(ObjectKey(self._namespace, name))
        if obj is None:
            raise NotFound(
                f'{self._resource} "{self._namespace}/{name}" not found in the informer cache',
                reason="NotFound",
            )
        return obj

    def get_or_none(self, name: str) -> T | None:
        """Like :meth:`get` but returns None when the object is not cached."""
        return self._indexer.get(ObjectKey(self._namespace, name))

    def list(self, selector: Selector | Mapping[str, str] | str | None = None) -> builtins.list[T]:
        """Objects of this namespace whose labels match ``selector`` (via the namespace index)."""
        return _select(self._indexer.by_index(NAMESPACE_INDEX, self._namespace), selector)
