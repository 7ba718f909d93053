"""Syncs held back by a stale EndpointSlice cache, run again as soon as the cache moves."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

from kcm.models import ObjectKey
from kcm.models.discovery_v1 import EndpointSlice

from ._endpoint_slice_tracker import StaleInformerCache
from ._endpoint_slices import service_key_for_slice

__all__ = ["StaleSliceSyncs"]


@final
class StaleSliceSyncs:
    """The Service (or Endpoints) keys whose last sync stopped with
    :class:`StaleInformerCache`. Go waits out the queue's backoff (1 s and more) before it
    looks again; any slice event may be the write the sync was waiting for, so
    :meth:`cache_moved` queues the key at once instead.

    Args:
        add: queues a key now, e.g. ``lambda key: controller.queue.add(key)``.
    """

    def __init__(self, add: Callable[[ObjectKey], None]) -> None:
        self._add = add
        self._keys: set[ObjectKey] = set()

    def __repr__(self) -> str:
        return f"<StaleSliceSyncs waiting={len(self._keys)}>"

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def starting(self, key: ObjectKey) -> None:
        """A sync of ``key`` starts: it is no longer waiting for the cache."""
        self._keys.discard(key)

    def stale(self, key: ObjectKey, message: str | None = None) -> StaleInformerCache:
        """Remember that the sync of ``key`` found the cache stale; returns the error to
        raise (``raise syncs.stale(key)``)."""
        self._keys.add(key)
        return StaleInformerCache() if message is None else StaleInformerCache(message)

    def cache_moved(self, endpoint_slice: EndpointSlice) -> None:
        """A slice event arrived (call it from every slice handler): the slice's Service key,
        if its last sync found the cache stale, is queued now."""
        key = service_key_for_slice(endpoint_slice)
        if key is not None and key in self._keys:
            self._keys.discard(key)
            self._add(key)
