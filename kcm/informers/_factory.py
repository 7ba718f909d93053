"""SharedInformerFactory: one informer per (kind, namespace, selectors), started together."""

from __future__ import annotations

import builtins
import gc
import random
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeVar, cast, final

import anyio
import anyio.abc
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.models import PartialObjectMetadata, ResourceInfo, Unstructured, resource_info_for

from ._indexer import IndexFunc
from ._listers import Lister
from ._shared_informer import SharedIndexInformer
from ._transforms import Transform
from ._types import KubeObject, ListerWatcher

__all__ = ["InformerKey", "SharedInformerFactory"]

T = TypeVar("T", bound=KubeObject)


class InformerKey(NamedTuple):
    """What makes two informers the same: the decoded type, the resource, the scope."""

    model: type[Any]
    resource: str
    """``group/version/plural``."""
    namespace: str
    label_selector: str
    field_selector: str


def _resource_id(info: ResourceInfo) -> str:
    return f"{info.api_version}/{info.plural}"


@final
class SharedInformerFactory:
    """Hands out shared informers and runs them.

    ``informer_for(Pod)`` twice returns the same informer; different namespaces or selectors
    give different informers (I16; plus per-informer selectors).

    Args:
        client: the API client whose ``api(...)`` handles feed the informers.
        namespace: default namespace of every informer (None = all namespaces).
        label_selector, field_selector: default selectors of every informer.
        resync_period: default resync period of every informer (0 = never).
        transform: default transform (e.g. :func:`strip_managed_fields`).
        watch_list: let informers try the streaming watch-list.
        watch_error_handler: sees every informer's list/watch errors.
        freeze_gc_after_sync: call :func:`gc.freeze` once every informer requested before
            :meth:`run` has synced. The cached objects then leave the cyclic GC's
            generations, so later collections do not rescan a large cache (Python's cyclic GC
            otherwise dominates decode time once the cache is large). Process-wide: opt in
            from the application, not from a library.
        pause_gc_during_list: passed to every informer: keep the cyclic GC from rescanning
            a LIST while it is decoded (temporary, nothing left changed; see
            :class:`SharedIndexInformer`). Default on.
        clock, rng: injectable time and randomness.

    Usage::

        factory = SharedInformerFactory(client)
        pods = factory.informer_for(Pod)
        pods.add_event_handler(on_add=...)
        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)   # returns once every informer has synced
            ...
    """

    def __init__(
        self,
        client: ApiClient,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resync_period: float = 0.0,
        transform: Transform[Any] | None = None,
        watch_list: bool = False,
        watch_error_handler: Callable[[Exception], None] | None = None,
        freeze_gc_after_sync: bool = False,
        pause_gc_during_list: bool = True,
        clock: Clock = SYSTEM_CLOCK,
        rng: random.Random | None = None,
    ) -> None:
        self._client = client
        self._freeze_gc = freeze_gc_after_sync
        self._pause_gc = pause_gc_during_list
        self._namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._resync_period = resync_period
        self._transform = transform
        self._watch_list = watch_list
        self._watch_error_handler = watch_error_handler
        self._clock = clock
        self._rng = rng
        self._informers: dict[InformerKey, SharedIndexInformer[Any]] = {}
        self._started: set[InformerKey] = set()
        self._tg: anyio.abc.TaskGroup | None = None
        self._shut_down = False

    # -- informers -----------------------------------------------------------------------

    def informer_for(
        self,
        model: type[T],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource: ResourceInfo | None = None,
        indexers: Mapping[str, IndexFunc[T]] | None = None,
        resync_period: float | None = None,
        transform: Transform[T] | None = None,
    ) -> SharedIndexInformer[T]:
        """The shared informer for ``model`` in ``namespace`` with these selectors.

        Arguments left None take the factory's defaults. ``indexers``, ``resync_period`` and
        ``transform`` only apply when this call creates the informer (add more indices later
        with ``add_indexers``).

        Raises:
            KeyError: ``model`` is not a registered kind and no ``resource`` was given.
        """
        info = resource if resource is not None else resource_info_for(model)
        return self._get(
            model,
            info,
            namespace,
            label_selector,
            field_selector,
            indexers,
            resync_period,
            transform,
        )

    def unstructured_informer(
        self,
        resource: ResourceInfo,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        indexers: Mapping[str, IndexFunc[Unstructured]] | None = None,
        resync_period: float | None = None,
    ) -> SharedIndexInformer[Unstructured]:
        """A shared informer of :class:`Unstructured` objects (CRDs, kinds without a model).
        ``resource`` comes from ``await client.discover(api_version, kind)``."""
        return self._get(
            Unstructured,
            resource,
            namespace,
            label_selector,
            field_selector,
            indexers,
            resync_period,
            None,
        )

    def metadata_informer(
        self,
        resource: ResourceInfo | type[Any],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        indexers: Mapping[str, IndexFunc[PartialObjectMetadata]] | None = None,
        resync_period: float | None = None,
        transform: Transform[PartialObjectMetadata] | None = None,
    ) -> SharedIndexInformer[PartialObjectMetadata]:
        """A shared metadata-only informer (client-go's ``metadatainformer``): it lists and
        watches with ``Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;
        v=v1`` (``as=PartialObjectMetadata`` for the watch), so the server sends only each
        object's metadata, and caches :class:`PartialObjectMetadata` (name, labels, owners,
        finalizers...). A server that cannot convert sends whole objects; they are decoded as
        metadata all the same. ``resource`` is a ResourceInfo or a registered model class;
        ``transform`` (e.g. :func:`strip_managed_fields`) applies when this call creates the
        informer."""
        info = resource if isinstance(resource, ResourceInfo) else resource_info_for(resource)
        return self._get(
            PartialObjectMetadata,
            info,
            namespace,
            label_selector,
            field_selector,
            indexers,
            resync_period,
            transform,
        )

    def lister_for(
        self,
        model: type[T],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Lister[T]:
        """The lister of :meth:`informer_for` with the same arguments."""
        return self.informer_for(
            model, namespace=namespace, label_selector=label_selector, field_selector=field_selector
        ).lister()

    def _get(
        self,
        model: type[T],
        info: ResourceInfo,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        indexers: Mapping[str, IndexFunc[T]] | None,
        resync_period: float | None,
        transform: Transform[T] | None,
    ) -> SharedIndexInformer[T]:
        ns = namespace if namespace is not None else self._namespace
        if not info.namespaced:
            ns = None
        labels = label_selector if label_selector is not None else self._label_selector
        fields = field_selector if field_selector is not None else self._field_selector
        key = InformerKey(model, _resource_id(info), ns or "", labels or "", fields or "")
        existing = self._informers.get(key)
        if existing is not None:
            return cast(SharedIndexInformer[T], existing)
        if self._shut_down:
            raise RuntimeError("the informer factory has shut down")
        api = self._client.api(model, ns, resource=info)
        informer: SharedIndexInformer[T] = SharedIndexInformer(
            cast(ListerWatcher[T], api),
            resync_period=self._resync_period if resync_period is None else resync_period,
            indexers=indexers,
            transform=transform if transform is not None else self._transform,
            label_selector=labels,
            field_selector=fields,
            resource=info.plural,
            watch_error_handler=self._watch_error_handler,
            watch_list=self._watch_list,
            pause_gc_during_list=self._pause_gc,
            clock=self._clock,
            rng=self._rng,
        )
        self._informers[key] = informer
        if self._tg is not None:
            self.start()
        return informer

    def informers(self) -> dict[InformerKey, SharedIndexInformer[Any]]:
        """Every informer created so far, by key."""
        return dict(self._informers)

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Start every informer not started yet (idempotent). Needs :meth:`run` running;
        informers requested while it runs are started automatically.

        Raises:
            RuntimeError: :meth:`run` is not running.
        """
        if self._tg is None:
            raise RuntimeError("start() needs the factory running: await tg.start(factory.run)")
        for key, informer in self._informers.items():
            if key not in self._started:
                self._started.add(key)
                self._tg.start_soon(informer.run)

    async def wait_for_cache_sync(self) -> dict[InformerKey, bool]:
        """Wait until every **started** informer has synced; returns their sync state.

        Put a deadline around it (``anyio.move_on_after``) and inspect the result.
        """
        started = [(k, self._informers[k]) for k in builtins.list(self._started)]
        for _, informer in started:
            await informer.wait_for_sync()
        return {k: i.has_synced for k, i in started}

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run every informer (and those requested later) until cancelled.

        ``task_status.started()`` is called once every informer requested before ``run``
        has synced.
        """
        if self._tg is not None or self._shut_down:
            raise RuntimeError("the informer factory is already running or shut down")
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                self.start()
                await self.wait_for_cache_sync()
                if self._freeze_gc:
                    gc.freeze()
                task_status.started()
        finally:
            self._tg = None
            self._shut_down = True
