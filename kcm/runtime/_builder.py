"""The builder: the usual controller wiring as one expression (controller-runtime's builder, C16).

::

    controller = (
        controller_for(factory, ReplicaSet, predicates=[spec_or_deletion_changed()])
        .owns(Pod)
        .with_options(max_concurrent_reconciles=4)
        .build(ReplicaSetReconciler(...))
    )
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Self, TypeVar, final

from prometheus_client import CollectorRegistry

from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.informers import KubeObject, SharedInformerFactory
from kcm.models import ObjectKey, resource_info_for
from kcm.workqueue import RateLimiter

from ._controller import Controller
from ._handlers import EnqueueForObject, EnqueueForOwner, EventHandler
from ._predicates import Predicate
from ._reconciler import Reconciler

__all__ = ["ControllerBuilder", "controller_for"]

T = TypeVar("T", bound=KubeObject)


@dataclass(frozen=True, slots=True)
class _Watch:
    model: type[Any]
    make_handler: Callable[[type[Any] | None], EventHandler[Any]]
    """Builds the handler given the ``for_`` model (None if there is none)."""
    predicates: tuple[Predicate[Any], ...]
    namespace: str | None
    label_selector: str | None


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

    def for_(
        self,
        model: type[T],
        *,
        predicates: Sequence[Predicate[T]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self:
        """Reconcile objects of ``model``: each event for one enqueues its own key.

        Args:
            model: the reconciled kind (a registered model class).
            predicates: filters for this watch (after :meth:`with_event_filter`'s).
            namespace, label_selector: restrict the informer (default: the factory's).

        Raises:
            ValueError: ``for_`` was already called.
        """
        if self._for is not None:
            raise ValueError(
                f"for_() was already called with {self._for.model.__name__}; a controller "
                "reconciles one kind: use watches() or owns() for the others"
            )
        self._for = _Watch(
            model, _fixed(EnqueueForObject()), tuple(predicates), namespace, label_selector
        )
        return self

    def owns(
        self,
        model: type[T],
        *,
        predicates: Sequence[Predicate[T]] = (),
        only_controller: bool = True,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self:
        """Also reconcile the owner (of the :meth:`for_` kind) of objects of ``model``.

        Args:
            model: the owned kind.
            predicates: filters for this watch.
            only_controller: only follow the ``controller: true`` owner reference (default,
                C11); False follows every owner reference of the ``for_`` kind.
            namespace, label_selector: restrict the informer.
        """

        def owner_handler(owner: type[Any] | None) -> EventHandler[Any]:
            if owner is None:
                raise ValueError("owns() needs for_(): the owner kind is the for_() kind")
            return EnqueueForOwner(owner, only_controller=only_controller)

        self._watches.append(
            _Watch(model, owner_handler, tuple(predicates), namespace, label_selector)
        )
        return self

    def watches(
        self,
        model: type[T],
        handler: EventHandler[T],
        *,
        predicates: Sequence[Predicate[T]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Self:
        """Enqueue the keys ``handler`` maps each event of ``model`` to (for example
        :func:`enqueue_mapped`)."""
        self._watches.append(
            _Watch(model, _fixed(handler), tuple(predicates), namespace, label_selector)
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
            name = resource_info_for(self._for.model).kind.lower()
        for watch in watches:
            resource_info_for(watch.model)  # fail before anything is registered
        for_model = self._for.model if self._for is not None else None
        handlers = [watch.make_handler(for_model) for watch in watches]
        self._built = True
        controller: Controller[ObjectKey] = Controller(
            name, reconciler, clock=self._clock, metrics=self._metrics, **self._options
        )
        for watch, handler in zip(watches, handlers, strict=True):
            informer = self._factory.informer_for(
                watch.model, namespace=watch.namespace, label_selector=watch.label_selector
            )
            controller.watch(informer, handler, predicates=self._filters + watch.predicates)
        return controller


def _fixed(handler: EventHandler[Any]) -> Callable[[type[Any] | None], EventHandler[Any]]:
    return lambda _owner: handler


def controller_for(
    factory: SharedInformerFactory,
    model: type[T],
    *,
    predicates: Sequence[Predicate[T]] = (),
    clock: Clock = SYSTEM_CLOCK,
    metrics: CollectorRegistry | None = None,
) -> ControllerBuilder:
    """``ControllerBuilder(factory, ...).for_(model, predicates=...)``: the common start."""
    return ControllerBuilder(factory, clock=clock, metrics=metrics).for_(
        model, predicates=predicates
    )
