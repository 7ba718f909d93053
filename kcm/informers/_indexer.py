"""The informer's cache: key → object plus named secondary indices (client-go's Indexer).

Fed by the shared informer's delta processing; read by listers and by user code. Every method
is synchronous, so on one event loop a read never sees a half-applied update: an update of the
object map and of every index happens between two awaits.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Generic, TypeVar, final

from kcm.models import ObjectKey

from ._keys import KeyFunc, meta_namespace_key
from ._types import KubeObject

__all__ = ["NAMESPACE_INDEX", "IndexFunc", "Indexer", "namespace_index_func"]

T = TypeVar("T", bound=KubeObject)

IndexFunc = Callable[[T], Iterable[str]]
"""Computes the values an object is indexed under (zero, one or many)."""

NAMESPACE_INDEX = "namespace"
"""The name of the built-in index by namespace ("" for cluster-scoped objects)."""


def namespace_index_func(obj: KubeObject) -> tuple[str]:
    """Index an object by its namespace (``""`` for cluster-scoped objects)."""
    return (obj.metadata.namespace or "",)


@final
class Indexer(Generic[T]):
    """A key → object store with named indices.

    Objects are stored as given (never copied): informers hand out frozen models, so sharing
    them is safe. Keys are :class:`ObjectKey` values computed by ``key_func``.

    Guarantees:
        * Every index reflects exactly the stored objects after each call returns; an index
          value whose key set becomes empty is dropped (B8).
        * If an index function raises, the call raises before anything was changed.
        * The built-in ``"namespace"`` index always exists.
    """

    def __init__(
        self,
        *,
        key_func: KeyFunc = meta_namespace_key,
        indexers: Mapping[str, IndexFunc[T]] | None = None,
    ) -> None:
        self._key_func = key_func
        self._items: dict[ObjectKey, T] = {}
        self._indexers: dict[str, IndexFunc[T]] = {NAMESPACE_INDEX: namespace_index_func}
        self._indices: dict[str, dict[str, set[ObjectKey]]] = {NAMESPACE_INDEX: {}}
        if indexers:
            self.add_indexers(indexers)

    # -- reads ---------------------------------------------------------------------------

    def key_of(self, obj: T) -> ObjectKey:
        """The store key of ``obj``."""
        return self._key_func(obj)

    def get(self, key: ObjectKey) -> T | None:
        """The object stored under ``key``, or None."""
        return self._items.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def list(self) -> builtins.list[T]:
        """A snapshot list of every stored object."""
        return list(self._items.values())

    def keys(self) -> builtins.list[ObjectKey]:
        """A snapshot list of every key."""
        return list(self._items)

    def items(self) -> builtins.list[tuple[ObjectKey, T]]:
        """A snapshot list of (key, object) pairs."""
        return list(self._items.items())

    def indexers(self) -> dict[str, IndexFunc[T]]:
        """The registered index functions by name (a copy)."""
        return dict(self._indexers)

    def _index(self, name: str) -> dict[str, set[ObjectKey]]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(
                f"index {name!r} does not exist; known indices: {sorted(self._indices)}"
            ) from None

    def index_keys(self, index_name: str, value: str) -> builtins.list[ObjectKey]:
        """Keys of the objects indexed under ``value`` in ``index_name``.

        Raises:
            KeyError: no index named ``index_name``.
        """
        return list(self._index(index_name).get(value, ()))

    def by_index(self, index_name: str, value: str) -> builtins.list[T]:
        """Objects indexed under ``value`` in ``index_name``.

        Raises:
            KeyError: no index named ``index_name``.
        """
        items = self._items
        return [items[k] for k in self._index(index_name).get(value, ())]

    def index(self, index_name: str, obj: T) -> builtins.list[T]:
        """Objects sharing any index value with ``obj`` (each object once).

        Raises:
            KeyError: no index named ``index_name``.
        """
        index = self._index(index_name)
        keys: set[ObjectKey] = set()
        for value in self._indexers[index_name](obj):
            keys.update(index.get(value, ()))
        items = self._items
        return [items[k] for k in keys]

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value with at least one object in ``index_name`` (empty for unknown names)."""
        return list(self._indices.get(index_name, ()))

    # -- writes --------------------------------------------------------------------------

    def add_indexers(self, indexers: Mapping[str, IndexFunc[T]]) -> None:
        """Register more indices and back-fill them from the stored objects (S7; client-go ≥1.30).

        Raises:
            ValueError: a name is already registered ("indexer conflict").
        """
        clash = sorted(set(indexers) & set(self._indexers))
        if clash:
            raise ValueError(f"indexer conflict: {clash} already registered")
        built: dict[str, dict[str, set[ObjectKey]]] = {}
        for name, fn in indexers.items():
            index: dict[str, set[ObjectKey]] = {}
            for key, obj in self._items.items():
                for value in fn(obj):
                    index.setdefault(value, set()).add(key)
            built[name] = index
        self._indexers.update(indexers)
        self._indices.update(built)

    def upsert(self, key: ObjectKey, obj: T) -> T | None:
        """Store ``obj`` under ``key`` (add or replace) and return the previous object.

        Raises:
            Exception: whatever an index function raised; the store is then unchanged.
        """
        old = self._items.get(key)
        indexers = self._indexers
        if len(indexers) == 1:
            # Fast path: only the namespace index.
            ns = obj.metadata.namespace or ""
            if old is None or (old.metadata.namespace or "") != ns:
                index = self._indices[NAMESPACE_INDEX]
                if old is not None:
                    self._discard(index, old.metadata.namespace or "", key)
                bucket = index.get(ns)
                if bucket is None:
                    index[ns] = {key}
                else:
                    bucket.add(key)
        else:
            changes = [
                (name, tuple(fn(old)) if old is not None else (), tuple(fn(obj)))
                for name, fn in indexers.items()
            ]
            indices = self._indices
            for name, old_values, new_values in changes:
                if old_values == new_values and len(new_values) == 1:
                    continue  # one unchanged value (S5)
                index = indices[name]
                for value in old_values:
                    self._discard(index, value, key)
                for value in new_values:
                    bucket = index.get(value)
                    if bucket is None:
                        index[value] = {key}
                    else:
                        bucket.add(key)
        self._items[key] = obj
        return old

    def add(self, obj: T) -> T | None:
        """Store ``obj`` under its key; returns the object it replaced, if any."""
        return self.upsert(self._key_func(obj), obj)

    update = add

    def delete(self, key: ObjectKey) -> T | None:
        """Remove the object stored under ``key`` and return it (None if absent)."""
        old = self._items.pop(key, None)
        if old is None:
            return None
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(old):
                self._discard(index, value, key)
        return old

    def replace(self, objects: Iterable[T]) -> None:
        """Swap the whole content for ``objects`` and rebuild every index (S2).

        Raises:
            Exception: whatever an index function raised; the store is then unchanged.
        """
        items = {self._key_func(obj): obj for obj in objects}
        indices: dict[str, dict[str, set[ObjectKey]]] = {}
        for name, fn in self._indexers.items():
            index: dict[str, set[ObjectKey]] = {}
            for key, obj in items.items():
                for value in fn(obj):
                    bucket = index.get(value)
                    if bucket is None:
                        index[value] = {key}
                    else:
                        bucket.add(key)
            indices[name] = index
        self._items = items
        self._indices = indices

    @staticmethod
    def _discard(index: dict[str, set[ObjectKey]], value: str, key: ObjectKey) -> None:
        bucket = index.get(value)
        if bucket is not None:
            bucket.discard(key)
            if not bucket:
                del index[value]
