"""The builder: the usual controller wiring as one expression (C16: controller-runtime's builder).

::

    controller = (
        controller_for(factory, ReplicaSet, predicates=[spec_or_deletion_changed()])
        .owns(Pod)
        .with_options(max_concurrent_reconciles=4)
        .build(ReplicaSetReconciler(...))
    )

Every watch takes a model class (typed objects), a ``ResourceInfo`` (``Unstructured``
objects, for CRDs without a model) or either with ``metadata_only=True``
(``PartialObjectMetadata``: controller-runtime's ``OnlyMetadata`` option).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Self, TypeVar, final, overload

from prometheus_client import CollectorRegistry

from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.informers import KubeObject, SharedIndexInformer, SharedInformerFactory
from kcm.models import (
    ObjectKey,
    PartialObjectMetadata,
    ResourceInfo,
    Unstructured,
    resource_info_for,
)
from kcm.workqueue import RateLimiter

from ._controller import Controller
from ._handlers import EnqueueForObject, EnqueueForOwner, EventHandler
from ._predicates import Predicate
from ._reconciler import Reconciler

__all__ = ["ControllerBuilder", "controller_for"]

T = TypeVar("T", bound=KubeObject)


Source = type[Any] | ResourceInfo
"""What a watch is over: a registered model class, or a ``ResourceInfo`` (unstructured)."""


@dataclass(frozen=True, slots=True)
class _Watch:
    source: Source
    metadata_only: bool
    make_handler: Callable[[ResourceInfo | None], EventHandler[Any]]
    """Builds the handler given the ``for_`` resource (None if there is none)."""
    predicates: tuple[Predicate[Any], ...]
    namespace: str | None
    label_selector: str | None

    def info(self) -> ResourceInfo:
        """The watched resource. Raises ``KeyError`` for an unregistered model class."""
        source = self.source
        return source if isinstance(source, ResourceInfo) else resource_info_for(source)

    def describe(self) -> str:
        """``Pod``, ``Pod (metadata-only)``, ``example.com/v1 Widget (unstructured)``."""
        if isinstance(self.source, ResourceInfo):
            name = f"{self.source.api_version} {self.source.kind}"
            return f"{name} (metadata-only)" if self.metadata_only else f"{name} (unstructured)"
        name = self.source.__name__
        return f"{name} (metadata-only)" if self.metadata_only else name

    def informer(self, factory: SharedInformerFactory) -> SharedIndexInformer[Any]:
        ns, labels = self.namespace, self.label_selector
        if self.metadata_only:
            return factory.metadata_informer(self.source, namespace=ns, label_selector=labels)
        if isinstance(self.source, ResourceInfo):
            return factory.unstructured_informer(self.source, namespace=ns, label_selector=labels)
        return factory.informer_for(self.source, namespace=ns, label_selector=labels)


@final
class ControllerBuilder:
    """Collects what a controller watches, then :meth:`build` wires it to the informers.

    Args:
        factory: where the informers come from (one shared informer per kind and scope). The
            builder only registers handlers; running the factory is the caller's (or the
            manager's) job.
        clock: passed to the controller.
        metrics: a registry for the controller's and its work queue's metrics.

    Every method but :meth:`build` returns the builder, so calls chain.
    """

    def __init__(
        self,
        factory: SharedInformerFactory,
        *,
        clock: Clock = SYSTEM_CLOCK,
        metrics: CollectorRegistry | None = None,
    ) -> None:
        self._factory = factory
        self._clock = clock
        self._metrics = metrics
        self._for: _Watch | None = None
        self._watches: list[_Watch] = []
        self._filters: tuple[Predicate[Any], ...] = ()
        self._name: str | None = None
        self._options: dict[str, Any] = {}
        self._built = False

    @overload
    def for_(
        self,
        model: type[T],
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[T]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    @overload
    def for_(
        self,
        model: ResourceInfo,
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[Unstructured]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    @overload
    def for_(
        self,
        model: Source,
        *,
        metadata_only: Literal[True],
        predicates: Sequence[Predicate[PartialObjectMetadata]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    def for_(
        self,
        model: Source,
        *,
        metadata_only: bool = False,
        predicates: Sequence[Predicate[Any]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self:
        """Reconcile objects of ``model``: each event for one enqueues its own key.

        Args:
            model: the reconciled kind: a registered model class, or a ``ResourceInfo``
                (from ``await client.discover(api_version, kind)``) to watch
                :class:`~kcm.models.Unstructured` objects, e.g. of a CRD without a model.
            metadata_only: watch :class:`~kcm.models.PartialObjectMetadata` through the
                factory's metadata informer (controller-runtime's ``OnlyMetadata``): less
                memory and decoding; read the object with the API (or the same metadata
                informer's lister) in the reconciler.
            predicates: filters for this watch (after :meth:`with_event_filter`'s), typed for
                what the watch delivers (``T``, ``Unstructured`` or ``PartialObjectMetadata``).
            namespace, label_selector: restrict the informer (default: the factory's).

        Raises:
            ValueError: ``for_`` was already called.
        """
        return self._set_for(model, metadata_only, predicates, namespace, label_selector)

    def _set_for(
        self,
        model: Source,
        metadata_only: bool,
        predicates: Sequence[Predicate[Any]],
        namespace: str | None,
        label_selector: str | None,
    ) -> Self:
        """:meth:`for_` without its overloads, for callers that forward an argument of any
        source kind (``controller_for``): one call instead of a branch per overload."""
        if self._for is not None:
            raise ValueError(
                f"for_() was already called with {self._for.describe()}; a controller "
                "reconciles one kind: use watches() or owns() for the others"
            )
        self._for = _Watch(
            model,
            metadata_only,
            _fixed(EnqueueForObject()),
            tuple(predicates),
            namespace,
            label_selector,
        )
        return self

    @overload
    def owns(
        self,
        model: type[T],
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[T]] = (),
        only_controller: bool = True,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    @overload
    def owns(
        self,
        model: ResourceInfo,
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[Unstructured]] = (),
        only_controller: bool = True,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    @overload
    def owns(
        self,
        model: Source,
        *,
        metadata_only: Literal[True],
        predicates: Sequence[Predicate[PartialObjectMetadata]] = (),
        only_controller: bool = True,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    def owns(
        self,
        model: Source,
        *,
        metadata_only: bool = False,
        predicates: Sequence[Predicate[Any]] = (),
        only_controller: bool = True,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self:
        """Also reconcile the owner (of the :meth:`for_` kind) of objects of ``model``.

        Owned objects only need their owner references, so ``metadata_only=True`` is usually
        the cheaper choice (unless the reconciler lists them from the typed cache anyway).

        Args:
            model: the owned kind: a model class or a ``ResourceInfo`` (unstructured).
            metadata_only: watch ``PartialObjectMetadata`` (see :meth:`for_`).
            predicates: filters for this watch.
            only_controller: only follow the ``controller: true`` owner reference (C11; the
                default); False follows every owner reference of the ``for_`` kind.
            namespace, label_selector: restrict the informer.
        """

        def owner_handler(owner: ResourceInfo | None) -> EventHandler[Any]:
            if owner is None:
                raise ValueError("owns() needs for_(): the owner kind is the for_() kind")
            return EnqueueForOwner(owner, only_controller=only_controller)

        self._watches.append(
            _Watch(
                model, metadata_only, owner_handler, tuple(predicates), namespace, label_selector
            )
        )
        return self

    @overload
    def watches(
        self,
        model: type[T],
        handler: EventHandler[T],
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[T]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    @overload
    def watches(
        self,
        model: ResourceInfo,
        handler: EventHandler[Unstructured],
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[Unstructured]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    @overload
    def watches(
        self,
        model: Source,
        handler: EventHandler[PartialObjectMetadata],
        *,
        metadata_only: Literal[True],
        predicates: Sequence[Predicate[PartialObjectMetadata]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self: ...
    def watches(
        self,
        model: Source,
        handler: EventHandler[Any],
        *,
        metadata_only: bool = False,
        predicates: Sequence[Predicate[Any]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self:
        """Enqueue the keys ``handler`` maps each event of ``model`` to (for example
        :func:`enqueue_mapped`). ``model`` and ``metadata_only`` as in :meth:`for_`; the
        handler and predicates are typed for what the watch delivers."""
        self._watches.append(
            _Watch(
                model, metadata_only, _fixed(handler), tuple(predicates), namespace, label_selector
            )
        )
        return self

    def with_event_filter(self, *predicates: Predicate[Any]) -> Self:
        """Predicates applied to every watch, before the watch's own (C15)."""
        self._filters += predicates
        return self

    def named(self, name: str) -> Self:
        """The controller's name (default: the ``for_`` kind in lower case). Names label the
        metrics and must be unique per registry."""
        self._name = name
        return self

    def with_options(
        self,
        *,
        max_concurrent_reconciles: int | None = None,
        rate_limiter: RateLimiter[ObjectKey] | None = None,
        cache_sync_timeout: float | None = None,
        graceful_shutdown_timeout: float | None = None,
        reconcile_timeout: float | None = None,
    ) -> Self:
        """Controller options (see :class:`Controller`); arguments left None keep defaults."""
        given = {
            "max_concurrent_reconciles": max_concurrent_reconciles,
            "rate_limiter": rate_limiter,
            "cache_sync_timeout": cache_sync_timeout,
            "graceful_shutdown_timeout": graceful_shutdown_timeout,
            "reconcile_timeout": reconcile_timeout,
        }
        self._options.update({k: v for k, v in given.items() if v is not None})
        return self

    def build(self, reconciler: Reconciler[ObjectKey]) -> Controller[ObjectKey]:
        """Create the controller and register its handlers on the factory's informers.

        Returns:
            The controller; run it (``await tg.start(controller.run)``) next to the factory's
            ``run``. It waits for its handlers to sync before the first reconcile.

        Raises:
            ValueError: nothing to watch; ``owns()`` without ``for_()``; no name and no
                ``for_()``; ``build`` called twice.
            KeyError: a model is not a registered kind.
        """
        if self._built:
            raise ValueError("build() was already called on this builder")
        watches = ([self._for] if self._for is not None else []) + self._watches
        if not watches:
            raise ValueError("a controller must watch something: call for_(), owns() or watches()")
        name = self._name
        if name is None:
            if self._for is None:
                raise ValueError("call named() or for_(): the controller name comes from them")
            name = self._for.info().kind.lower()
        for watch in watches:
            watch.info()  # fail before anything is registered
        for_info = self._for.info() if self._for is not None else None
        handlers = [watch.make_handler(for_info) for watch in watches]
        self._built = True
        controller: Controller[ObjectKey] = Controller(
            name, reconciler, clock=self._clock, metrics=self._metrics, **self._options
        )
        for watch, handler in zip(watches, handlers, strict=True):
            controller.watch(
                watch.informer(self._factory),
                handler,
                predicates=self._filters + watch.predicates,
                kind=watch.describe(),
            )
        return controller


def _fixed(handler: EventHandler[Any]) -> Callable[[ResourceInfo | None], EventHandler[Any]]:
    return lambda _owner: handler


@overload
def controller_for(
    factory: SharedInformerFactory,
    model: type[T],
    *,
    metadata_only: Literal[False] = False,
    predicates: Sequence[Predicate[T]] = (),
    clock: Clock = SYSTEM_CLOCK,
    metrics: CollectorRegistry | None = None,
) -> ControllerBuilder: ...
@overload
def controller_for(
    factory: SharedInformerFactory,
    model: ResourceInfo,
    *,
    metadata_only: Literal[False] = False,
    predicates: Sequence[Predicate[Unstructured]] = (),
    clock: Clock = SYSTEM_CLOCK,
    metrics: CollectorRegistry | None = None,
) -> ControllerBuilder: ...
@overload
def controller_for(
    factory: SharedInformerFactory,
    model: Source,
    *,
    metadata_only: Literal[True],
    predicates: Sequence[Predicate[PartialObjectMetadata]] = (),
    clock: Clock = SYSTEM_CLOCK,
    metrics: CollectorRegistry | None = None,
) -> ControllerBuilder: ...
def controller_for(
    factory: SharedInformerFactory,
    model: Source,
    *,
    metadata_only: bool = False,
    predicates: Sequence[Predicate[Any]] = (),
    clock: Clock = SYSTEM_CLOCK,
    metrics: CollectorRegistry | None = None,
) -> ControllerBuilder:
    """``ControllerBuilder(factory, ...).for_(model, ...)``: the common start."""
    builder = ControllerBuilder(factory, clock=clock, metrics=metrics)
    return builder._set_for(model, metadata_only, predicates, None, None)
