"""The manager: one client, one informer factory, leader election, health and metrics (C20-C25).

controller-runtime's ``manager.Manager`` on anyio. :meth:`Manager.run` starts, in order, the
HTTP endpoint, the informers (and waits for their caches), the runnables that do not need
leader election, then campaigns for leadership and starts the leader-gated runnables once
elected. Shutdown goes the other way round.
"""

from __future__ import annotations

import logging
import random
import signal as signal_module
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, Protocol, TypeVar, final, overload

import anyio
import anyio.abc
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock, move_on_after
from kcm.errors import ConfigError, GracefulShutdownTimeout, LeaderElectionLost
from kcm.informers import KubeObject, SharedInformerFactory
from kcm.leaderelection import (
    ConfigMapLock,
    HealthzAdaptor,
    LeaderElectionConfig,
    LeaderElectionMetrics,
    LeaderElector,
    LeaseLock,
    MultiLock,
    ResourceLock,
    default_identity,
)
from kcm.models import PartialObjectMetadata, ResourceInfo, Unstructured
from kcm.record import EventBroadcaster, EventRecorder

from ._builder import ControllerBuilder, Source
from ._health_server import HealthCheck, HealthServer, HealthzApp, ServingOptions
from ._predicates import Predicate
from ._shutdown import HardStop

__all__ = ["LeaderElectionOptions", "Manager", "Runnable", "run_until_signal"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=KubeObject)


class Runnable(Protocol):
    """Anything the manager can run: ``run()`` calls ``task_status.started()`` once ready and
    returns when cancelled (a :class:`~kcm.runtime.Controller`, an informer factory, an
    event broadcaster, your own component)."""

    async def run(self, *, task_status: TaskStatus[None] = ...) -> None: ...


@dataclass(frozen=True, kw_only=True)
class LeaderElectionOptions:
    """How a :class:`Manager` campaigns for leadership (controller-runtime's ``LeaderElection*``
    options, kube-controller-manager's ``--leader-elect-*`` flags).

    Attributes:
        name: the lock's name, e.g. ``"kube-controller-manager"``.
        namespace: the lock's namespace.
        identity: this process's holder identity (default ``<hostname>_<uuid>``).
        lease_duration, renew_deadline, retry_period: the timings (15 s / 10 s / 2 s);
            validated as :class:`~kcm.leaderelection.LeaderElectionConfig` does.
        resource_lock: ``"leases"`` (default) or ``"configmapsleases"`` (migration).
        release_on_cancel: release the lease on a clean shutdown so a peer takes over at its
            next retry instead of after a full lease (default True, as the manager only
            releases after every leader-gated runnable has stopped).
        exit_on_loss: losing leadership stops the manager with
            :class:`~kcm.errors.LeaderElectionLost` (default, as controller-runtime exits).
            False: stop the leader-gated runnables (at once, without grace) and campaign
            again; on re-election their ``run()`` is called again, so only use it with
            runnables that can be restarted (a :class:`~kcm.runtime.Controller` can).
        lock: use this :class:`~kcm.leaderelection.ResourceLock` instead of building one
            from ``resource_lock`` on the manager's client. Busy managers should give the
            lock a client of its own (as kube-controller-manager does), so renewals never
            queue behind the informers' LISTs under the client's QPS limit. Tests pass an
            :class:`~kcm.leaderelection.InMemoryLock`.
        rng: randomness of the acquire jitter (seed it in tests).

    Raises:
        kcm.errors.ConfigError: inconsistent timings, an empty name or an unknown lock type.
    """

    name: str
    namespace: str = "kube-system"
    identity: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: Literal["leases", "configmapsleases"] = "leases"
    release_on_cancel: bool = True
    exit_on_loss: bool = True
    lock: ResourceLock | None = field(default=None, compare=False)
    rng: random.Random | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("leader election needs a lock name", field="name")
        if self.resource_lock not in ("leases", "configmapsleases"):
            raise ConfigError(
                f"unknown resource lock {self.resource_lock!r}; use 'leases' (or "
                "'configmapsleases' while migrating from a ConfigMap lock)",
                field="resource_lock",
            )
        self.config()  # validate the timings now, not when the manager starts

    def config(self) -> LeaderElectionConfig:
        """The elector's configuration."""
        return LeaderElectionConfig(
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
            release_on_cancel=self.release_on_cancel,
            name=self.name,
        )

    def build_lock(self, client: ApiClient) -> ResourceLock:
        """The configured lock (:attr:`lock` if given)."""
        if self.lock is not None:
            return self.lock
        identity = self.identity or default_identity()
        lease = LeaseLock(client, self.name, self.namespace, identity=identity)
        if self.resource_lock == "leases":
            return lease
        configmap = ConfigMapLock(client, self.name, self.namespace, identity=identity)
        return MultiLock(configmap, lease)


@dataclass(eq=False)
class _Layer:
    """One stage of the start order; stopped in reverse order on shutdown."""

    name: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)


@dataclass(eq=False)
class _Entry:
    runnable: Runnable
    needs_leader_election: bool
    started: bool = False
    running: bool = False


@final
class Manager:
    """Runs controllers (and any other :class:`Runnable`) sharing one client and one cache.

    Args:
        client: the API client every controller shares (:attr:`client`).
        clock: the time source of the manager, its informers and leader election.
        registry: the Prometheus registry ``/metrics`` serves (a fresh one by default); pass
            it to controllers (``metrics=manager.registry``; :meth:`controller_for` does).
        leader_election: campaign for this lock before starting leader-gated runnables;
            None: no election, every runnable starts at once.
        health_address: ``"host:port"`` to serve ``/healthz``, ``/livez``, ``/readyz`` and
            ``/metrics`` on (port 0 picks a free port, see :attr:`health_port`); None serves
            nothing.
        serving: TLS, delegated authentication/authorization and the port fallback of that
            endpoint (default: plain HTTP, open, fail when the port is taken).
        graceful_shutdown_timeout: how long stopping may take in total after :meth:`run` is
            cancelled (None: wait for ever; 0: cancel everything at once). When it runs out,
            everything still running is cancelled, in-flight reconciles included, and
            :meth:`run` raises :class:`~kcm.errors.GracefulShutdownTimeout`. Each controller
            also bounds its own in-flight reconciles with its own
            ``graceful_shutdown_timeout``, within this one.
        factory: the shared informer factory (default: one on ``client`` and ``clock``).
        cache_sync_timeout: :meth:`run` fails with ``TimeoutError`` if the informers have not
            synced by then.
        event_client: the client events are written with (default: ``client``). Give it one
            of its own when ``client`` also lists and watches for every informer: their
            requests drain its rate limiter at start and at every relist, and events would
            wait behind them (kube-controller-manager writes a controller's events with that
            controller's own client).

    Start order (:meth:`run`): HTTP endpoint → informers, waiting for their caches →
    event broadcaster → runnables added with ``needs_leader_election=False`` (in the order
    added, each started before the next) → leader election → once elected, the leader-gated
    runnables (in order). ``task_status.started()`` is called once the election has begun.

    Guarantees:
        * A leader-gated runnable never starts before this process holds the lease, and is
          stopped (fully) before the lease is released.
        * Losing leadership cancels the leader-gated runnables at once, in-flight reconciles
          included (no grace, as controller-runtime), and stops the manager with
          :class:`~kcm.errors.LeaderElectionLost` without grace for the rest (unless
          ``exit_on_loss=False``: then it campaigns again). A runnable that raises stops the
          manager with that exception (the first one, unwrapped from the task group).
        * Shutdown runs in reverse start order: leader-gated runnables (controllers let their
          in-flight reconciles finish), the lease is released, other runnables, events,
          informers, then the HTTP endpoint. ``/readyz`` fails from the moment shutdown
          begins. ``graceful_shutdown_timeout`` bounds it: at the deadline (or on
          :meth:`force_stop`) everything still running is cancelled, shields made with
          :func:`~kcm.runtime.graceful_shield` (controllers' in-flight reconciles) included;
          the timeout is logged at ERROR, :attr:`shutdown_timed_out` becomes True and, once
          everything has stopped, :meth:`run` raises
          :class:`~kcm.errors.GracefulShutdownTimeout`.

    Caveats:
        A manager runs once; build a new one (and a new factory) to start again. Cleanup
        shielded with a plain ``anyio.CancelScope(shield=True)`` cannot be cancelled: the
        manager waits for it past the deadline (the error log names the stages still running).
    """

    def __init__(
        self,
        client: ApiClient,
        *,
        clock: Clock = SYSTEM_CLOCK,
        registry: CollectorRegistry | None = None,
        leader_election: LeaderElectionOptions | None = None,
        health_address: str | None = None,
        serving: ServingOptions | None = None,
        graceful_shutdown_timeout: float | None = 30.0,
        factory: SharedInformerFactory | None = None,
        cache_sync_timeout: float = 120.0,
        event_client: ApiClient | None = None,
    ) -> None:
        self.client = client
        self._event_client = event_client if event_client is not None else client
        self.clock = clock
        self.registry = registry if registry is not None else CollectorRegistry()
        self.factory = (
            factory if factory is not None else SharedInformerFactory(client, clock=clock)
        )
        self.leader_election = leader_election
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self.cache_sync_timeout = cache_sync_timeout
        self._entries: list[_Entry] = []
        # /healthz and /livez: kube-controller-manager's leaderElection and one check per
        # controller; with none, the app answers with kube's implicit ping.
        self._healthz: dict[str, HealthCheck] = {}
        self._readyz: dict[str, HealthCheck] = {
            "ping": _ping,
            "informer-sync": self._check_informers,
            "shutdown": self._check_not_shutting_down,
        }
        self._le_metrics: LeaderElectionMetrics | None = None
        self._healthz_adaptor: HealthzAdaptor | None = None
        if leader_election is not None:
            self._le_metrics = LeaderElectionMetrics(self.registry)
            self._healthz_adaptor = HealthzAdaptor()
            self._healthz[HealthzAdaptor.name] = self._healthz_adaptor.check
        serve = serving or ServingOptions()
        self._server = (
            HealthServer(
                health_address,
                HealthzApp(
                    {"healthz": self._healthz, "livez": self._healthz, "readyz": self._readyz},
                    self.registry,
                    auth=serve.auth,
                ),
                ssl_context=serve.ssl_context,
                fallback_to_free_port=serve.fallback_to_free_port,
            )
            if health_address is not None
            else None
        )
        self._elector: LeaderElector | None = None
        self._broadcaster: EventBroadcaster | None = None
        self._recorders: dict[str, EventRecorder] = {}
        self._runnables_tg: anyio.abc.TaskGroup | None = None
        self._leader_tg: anyio.abc.TaskGroup | None = None
        self._elected: anyio.Event | None = None
        self._leading = False
        self._synced = False
        self._started = False
        self._shutting_down = False
        self._errors: list[Exception] = []
        self._hard_stop = HardStop()
        self._term_stop: HardStop | None = None
        self._stop_event: anyio.Event | None = None
        self._shutdown_wait: anyio.CancelScope | None = None
        self._forced = False
        self._leadership_lost = False
        self._shutdown_error: GracefulShutdownTimeout | None = None

    def __repr__(self) -> str:
        return f"<Manager runnables={len(self._entries)} leader_election={self.leader_election}>"

    # -- wiring ------------------------------------------------------------------------------

    def add(self, runnable: Runnable, *, needs_leader_election: bool = True) -> None:
        """Run ``runnable`` with the manager.

        Args:
            runnable: anything with ``async run(*, task_status)``.
            needs_leader_election: start it only while this process leads (the default, as
                controllers); False starts it right after the caches have synced, on every
                replica (e.g. a component that only serves reads).

        A runnable added while the manager runs is started at once (or, if it needs leader
        election and this process does not lead yet, once it is elected).

        Raises:
            RuntimeError: the manager has stopped.
        """
        if self._shutting_down:
            raise RuntimeError("the manager is shutting down or has stopped; build a new one")
        entry = _Entry(runnable, needs_leader_election)
        self._entries.append(entry)
        tg = self._leader_tg if needs_leader_election else self._runnables_tg
        stop = self._term_stop if needs_leader_election else self._hard_stop
        if tg is not None and stop is not None:
            entry.started = True
            tg.start_soon(partial(_run_entry, entry, stop, self._failed), name=repr(runnable))

    def add_healthz_check(self, name: str, check: HealthCheck) -> None:
        """Add a named ``/healthz`` (and ``/livez``) check: a function returning (or
        awaiting) normally when healthy and raising when not (e.g.
        :class:`~kcm.leaderelection.HealthzAdaptor`'s ``check``, registered automatically with
        leader election).

        Raises:
            ValueError: the name is empty, contains ``/``, or is taken.
        """
        if name == "ping":  # the implicit check of an endpoint without others
            raise ValueError("a healthz check named 'ping' is already registered (built in)")
        _add_check(self._healthz, "healthz", name, check)

    def add_readyz_check(self, name: str, check: HealthCheck) -> None:
        """Add a named ``/readyz`` check (see :meth:`add_healthz_check`). Built in:
        ``ping``, ``informer-sync`` (fails until every informer has synced) and
        ``shutdown`` (fails once shutdown has begun).

        Raises:
            ValueError: the name is empty, contains ``/``, or is taken.
        """
        _add_check(self._readyz, "readyz", name, check)

    @overload
    def controller_for(
        self,
        model: type[T],
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[T]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> ControllerBuilder: ...
    @overload
    def controller_for(
        self,
        model: ResourceInfo,
        *,
        metadata_only: Literal[False] = False,
        predicates: Sequence[Predicate[Unstructured]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> ControllerBuilder: ...
    @overload
    def controller_for(
        self,
        model: Source,
        *,
        metadata_only: Literal[True],
        predicates: Sequence[Predicate[PartialObjectMetadata]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> ControllerBuilder: ...
    def controller_for(
        self,
        model: Source,
        *,
        metadata_only: bool = False,
        predicates: Sequence[Predicate[Any]] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> ControllerBuilder:
        """A :class:`ControllerBuilder` on this manager's factory, clock and registry, with
        ``for_(model, ...)`` called; finish it with ``build(reconciler)`` and :meth:`add` the
        result. Takes what :meth:`ControllerBuilder.for_` takes: a model class, a
        ``ResourceInfo`` (unstructured objects) or either with ``metadata_only=True``."""
        return self.builder()._set_for(model, metadata_only, predicates, namespace, label_selector)

    def builder(self) -> ControllerBuilder:
        """A :class:`ControllerBuilder` on this manager's factory, clock and registry, whose
        controllers get the manager's ``graceful_shutdown_timeout`` for their in-flight
        reconciles (override it with ``with_options``)."""
        builder = ControllerBuilder(self.factory, clock=self.clock, metrics=self.registry)
        if self.graceful_shutdown_timeout is not None:
            builder.with_options(graceful_shutdown_timeout=self.graceful_shutdown_timeout)
        return builder

    def event_recorder(self, component: str) -> EventRecorder:
        """An event recorder reporting as ``component`` (e.g. ``"replicaset-controller"``).

        Every recorder shares one :class:`~kcm.record.EventBroadcaster` that the manager
        runs (after the informers, before any other runnable) and stops last among them, so
        events recorded during shutdown are still written. Its metrics go to :attr:`registry`.

        Raises:
            ValueError: ``component`` is empty.
            RuntimeError: the manager is already running (ask for recorders while wiring).
        """
        recorder = self._recorders.get(component)
        if recorder is None:
            recorder = self._recorders[component] = self._event_broadcaster().recorder(component)
        return recorder

    def _event_broadcaster(self) -> EventBroadcaster:
        if self._broadcaster is None:
            if self._started:
                raise RuntimeError(
                    "event_recorder() must be called before Manager.run(): the event "
                    "broadcaster starts with the manager"
                )
            self._broadcaster = EventBroadcaster(
                self._event_client, clock=self.clock, registry=self.registry
            )
        return self._broadcaster

    # -- state -------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """True while the leader-gated runnables may run: this process holds the lease (or
        there is no leader election and the manager is running)."""
        if self._elector is not None:
            return self._elector.is_leader and self._leading
        return self._leading

    @property
    def elector(self) -> LeaderElector | None:
        """The current term's elector (None without leader election or before :meth:`run`)."""
        return self._elector

    @property
    def health_port(self) -> int | None:
        """The port ``/healthz`` is served on while running (None without a health address)."""
        return None if self._server is None else self._server.port

    @property
    def health_address(self) -> str | None:
        """``host:port`` the endpoint is bound to while running."""
        return None if self._server is None else self._server.address

    @property
    def shutdown_timed_out(self) -> bool:
        """True once a shutdown did not finish within ``graceful_shutdown_timeout``, so what
        was still running got cancelled without its grace (controller-runtime's "failed
        waiting for all runnables to end within grace period"; also logged at ERROR, and
        :meth:`run` raises :class:`~kcm.errors.GracefulShutdownTimeout`)."""
        return self._shutdown_error is not None

    def force_stop(self) -> None:
        """Stop now, without grace: cancel everything still running, in-flight reconciles
        included (shields made with :func:`~kcm.runtime.graceful_shield` too).

        What a second SIGINT/SIGTERM does under :func:`run_until_signal` (Kubernetes
        components exit on a second signal). Starts the shutdown if it has not begun; a no-op
        once the manager has stopped.
        """
        if self._forced:
            return
        self._forced = True
        if self._stop_event is not None:
            self._stop_event.set()
        if self._shutdown_wait is not None:
            self._shutdown_wait.cancel()

    async def wait_elected(self) -> None:
        """Return once the leader-gated runnables have started (at once without election)."""
        if self._elected is None:
            self._elected = anyio.Event()
        await self._elected.wait()

    def _check_informers(self) -> None:
        if not self._synced:
            raise RuntimeError("informer caches have not synced yet")
        pending = [key.resource for key, i in self.factory.informers().items() if not i.has_synced]
        if pending:
            raise RuntimeError(f"informers not synced: {', '.join(sorted(pending))}")

    def _check_not_shutting_down(self) -> None:
        if self._shutting_down:
            raise RuntimeError("the manager is shutting down")

    # -- run ---------------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start everything in order and run until cancelled; then stop in reverse order.

        ``task_status.started()`` is called once the caches have synced, the runnables not
        needing leader election run and the election has begun (use :meth:`wait_elected` to
        wait for leadership).

        A shutdown that outlives ``graceful_shutdown_timeout`` cancels what is still running,
        logs the timeout at ERROR, sets :attr:`shutdown_timed_out` and, once everything has
        stopped, raises :class:`~kcm.errors.GracefulShutdownTimeout` (as controller-runtime's
        ``Start`` returns an error); :meth:`force_stop` and a timeout of 0 cancel everything
        without that error.

        Raises:
            RuntimeError: :meth:`run` was called before.
            kcm.errors.GracefulShutdownTimeout: the shutdown did not finish within
                ``graceful_shutdown_timeout`` (also a ``TimeoutError``); raised instead of
                the cancellation that started the shutdown. Not retryable. If a runnable's
                failure stopped the manager, that error is raised instead, with a note.
            TimeoutError: the informers did not sync within ``cache_sync_timeout``.
            kcm.errors.LeaderElectionLost: leadership was lost (``exit_on_loss``).
            OSError: the health address could not be bound.
            Exception: whatever a runnable raised (the manager stops when one fails).
        """
        if self._started:
            raise RuntimeError("a Manager runs once; build a new one to start again")
        self._started = True
        stop = self._stop_event = anyio.Event()
        if self._forced:
            stop.set()
        started = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._supervise, started, stop, name="manager")
                try:
                    with anyio.CancelScope() as waiting:
                        tg.start_soon(_cancel_on, stop, waiting)
                        await started.wait()
                        task_status.started()
                        await anyio.sleep_forever()  # until cancelled, or a stage fails
                finally:
                    stop.set()  # the supervisor stops everything, in order, then returns
        except BaseExceptionGroup as group:
            error = _unwrap(group)
            cancelled = isinstance(error, anyio.get_cancelled_exc_class())
            if cancelled and self._shutdown_error is not None:
                raise self._shutdown_error from None
            raise error from None
        except anyio.get_cancelled_exc_class():
            if self._shutdown_error is not None:
                # Cancelled (a signal): everything has stopped, but not within the grace.
                raise self._shutdown_error from None
            raise
        finally:
            self._shutting_down = True
            self._leading = False
        if self._errors:
            error = self._errors[0]
            if self._shutdown_error is not None:
                error.add_note(f"then the shutdown timed out: {self._shutdown_error}")
            raise error
        if self._shutdown_error is not None:
            raise self._shutdown_error

    async def _supervise(self, started: anyio.Event, stop: anyio.Event) -> None:
        """Start the stages in order, wait for the stop signal, stop them in reverse order.

        Everything runs under a shield: cancelling :meth:`run` only sets ``stop``, so the
        stages are stopped one by one instead of all at once. A stage that fails after it has
        started records its error and sets ``stop`` too.
        """
        layers: list[_Layer] = []
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:

                async def start(name: str, fn: Callable[..., Any]) -> None:
                    layer = _Layer(name)
                    layers.append(layer)
                    await tg.start(partial(self._run_layer, layer, fn), name=f"manager {name}")

                with anyio.CancelScope() as startup:
                    tg.start_soon(_cancel_on, stop, startup)
                    try:
                        if self._server is not None:
                            await start("http", self._server.run)
                        await start("caches", self._run_caches)
                        if self._broadcaster is not None:
                            await start("events", self._broadcaster.run)
                        await start("runnables", self._run_runnables)
                        await start("leader", self._run_leader)
                    except Exception as exc:  # a stage failed before it was ready
                        self._errors.append(_plain(exc))
                    else:
                        logger.info("manager started (%d runnables)", len(self._entries))
                        started.set()
                        await stop.wait()
                self._shutting_down = True
                stop.set()
                await self._shut_down(layers)

    async def _run_layer(
        self,
        layer: _Layer,
        fn: Callable[..., Any],
        *,
        task_status: TaskStatus[None],
    ) -> None:
        try:
            with layer.scope:  # tg.start() re-raises a failure before start in the supervisor
                await _run_reporting(
                    fn, layer.name, self._hard_stop, self._failed, task_status=task_status
                )
        finally:
            layer.done.set()

    def _failed(self, what: str, exc: Exception) -> None:
        """Record a failure after start and stop the manager: in order, under its deadline."""
        error = _plain(exc)
        logger.error("manager: %s failed; stopping the manager: %r", what, error)
        self._errors.append(error)
        if self._stop_event is not None:
            self._stop_event.set()

    async def _shut_down(self, layers: list[_Layer]) -> None:
        grace = self.graceful_shutdown_timeout
        if self._leadership_lost:
            grace = 0.0  # as controller-runtime: the process is expected to exit at once
        remaining = [layer for layer in reversed(layers) if not layer.done.is_set()]
        with anyio.CancelScope() as waiting:
            self._shutdown_wait = waiting
            if self._forced or grace == 0:
                waiting.cancel()
            async with move_on_after(
                self.clock, grace if grace is not None else float("inf")
            ) as deadline:
                while remaining:
                    layer = remaining[0]
                    logger.debug("manager: stopping %s", layer.name)
                    layer.scope.cancel()
                    await layer.done.wait()
                    remaining.pop(0)
        self._shutdown_wait = None
        if remaining:
            names = ", ".join(layer.name for layer in remaining)
            if self._forced:
                logger.warning("manager: stopping at once; cancelling %s", names)
            elif deadline.cancelled_caught and grace:
                self._shutdown_error = self._timeout_error(grace, remaining)
                logger.error("%s", self._shutdown_error)
            for layer in remaining:
                layer.scope.cancel()
            self._hard_stop.stop()
        logger.info("manager stopped")

    def _timeout_error(self, grace: float, remaining: list[_Layer]) -> GracefulShutdownTimeout:
        stages = tuple(layer.name for layer in remaining)
        runnables = tuple(_describe(entry.runnable) for entry in self._entries if entry.running)
        still = f" (still running: {', '.join(runnables)})" if runnables else ""
        return GracefulShutdownTimeout(
            "manager: failed waiting for all runnables to end within grace period of "
            f"{grace:g} s; cancelling {', '.join(stages)}{still}. Work in flight was cut short: "
            "make reconciles and shutdown cleanup return sooner when cancelled (a call without "
            "a timeout, a loop that never awaits), or give the manager a longer "
            "graceful_shutdown_timeout",
            timeout=grace,
            runnables=runnables,
            stages=stages,
        )

    async def _run_caches(self, *, task_status: TaskStatus[None]) -> None:
        async with anyio.create_task_group() as tg:
            async with move_on_after(self.clock, self.cache_sync_timeout) as scope:
                await tg.start(self.factory.run)
            if scope.cancelled_caught:
                pending = [
                    f"{key.resource} ({informer.last_error!r})"
                    for key, informer in self.factory.informers().items()
                    if not informer.has_synced
                ]
                raise TimeoutError(
                    f"manager: informer caches did not sync within {self.cache_sync_timeout} s:"
                    f" {', '.join(pending) or 'unknown'}; check RBAC and that the kinds exist"
                )
            self._synced = True
            task_status.started()

    async def _run_runnables(self, *, task_status: TaskStatus[None]) -> None:
        async with anyio.create_task_group() as tg:
            self._runnables_tg = tg
            for entry in self._entries:
                if not entry.needs_leader_election and not entry.started:
                    entry.started = True
                    await tg.start(
                        partial(_run_entry, entry, self._hard_stop, self._failed),
                        name=repr(entry.runnable),
                    )
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._runnables_tg = None

    async def _run_leader(self, *, task_status: TaskStatus[None]) -> None:
        task_status.started()
        options = self.leader_election
        if options is None:
            await self._lead()
            return
        lock = options.build_lock(self.client)
        while True:
            elector = LeaderElector(
                lock,
                options.config(),
                on_started_leading=self._lead,
                on_new_leader=partial(_log_new_leader, lock.identity),
                clock=self.clock,
                metrics=self._le_metrics,
                rng=options.rng,
            )
            self._elector = elector
            if self._healthz_adaptor is not None:
                self._healthz_adaptor.set_elector(elector)
            await elector.run()
            # run() returns only when renewing failed; the leader work has stopped by now.
            if options.exit_on_loss:
                self._leadership_lost = True
                raise LeaderElectionLost(
                    f"leader election lost: {lock.identity} could not renew lock "
                    f"{lock.describe()!r}; the manager stops (as controller-runtime exits). "
                    "Restart the process to campaign again"
                )
            logger.warning("manager: leadership lost; campaigning again")
            for entry in self._entries:
                if entry.needs_leader_election:
                    entry.started = False

    async def _lead(self) -> None:
        """The leader work: start the leader-gated runnables in order and keep them running.

        Losing leadership cancels them at once (a hard stop of this term): unlike a shutdown,
        in-flight reconciles get no grace, as another process may already lead.
        """
        logger.info("manager: elected; starting leader-gated runnables")
        term = self._term_stop = HardStop(self._hard_stop)
        try:
            async with anyio.create_task_group() as tg:
                self._leading = True
                self._leader_tg = tg
                for entry in self._entries:
                    if entry.needs_leader_election and not entry.started:
                        entry.started = True
                        await tg.start(
                            partial(_run_entry, entry, term, self._failed),
                            name=repr(entry.runnable),
                        )
                if self._elected is None:
                    self._elected = anyio.Event()
                self._elected.set()
                try:
                    await anyio.sleep_forever()
                finally:
                    if self._lost_leadership():
                        logger.error(
                            "manager: leadership lost; cancelling the leader-gated runnables "
                            "without grace"
                        )
                        term.stop()
        finally:
            self._leader_tg = None
            self._term_stop = None
            self._leading = False
            if self._elected is not None and self._elected.is_set():
                self._elected = None

    def _lost_leadership(self) -> bool:
        """True while the leader work is being cancelled because renewing the lease failed
        (the elector has stopped leading), not because the manager shuts down."""
        elector = self._elector
        return elector is not None and not elector.is_leader and not self._shutting_down


def _ping() -> None:
    """The ``ping`` check: the endpoint answers."""


def _add_check(checks: dict[str, HealthCheck], endpoint: str, name: str, fn: HealthCheck) -> None:
    if not name or "/" in name:
        raise ValueError(f"a {endpoint} check needs a non-empty name without '/', got {name!r}")
    if name in checks:
        raise ValueError(f"a {endpoint} check named {name!r} is already registered")
    checks[name] = fn


def _log_new_leader(identity: str, leader: str) -> None:
    if leader and leader != identity:
        logger.info("manager: the leader is %s", leader)


async def _cancel_on(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


class _Started:
    """A task status that remembers whether ``started()`` was called."""

    def __init__(self, status: TaskStatus[None]) -> None:
        self._status = status
        self.ready = False

    def started(self, value: None = None) -> None:
        self.ready = True
        self._status.started(value)


async def _run_entry(
    entry: _Entry,
    stop: HardStop,
    failed: Callable[[str, Exception], None],
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Run one runnable (see :func:`_run_reporting`), tracking whether it is running."""
    entry.running = True
    try:
        await _run_reporting(
            entry.runnable.run,
            _describe(entry.runnable),
            stop,
            failed,
            task_status=task_status,
        )
    finally:
        entry.running = False


async def _run_reporting(
    run: Callable[..., Any],
    what: str,
    stop: HardStop,
    failed: Callable[[str, Exception], None],
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """``await run(task_status=...)`` bound to ``stop``: a runnable or one manager stage.

    A failure after it started goes to ``failed`` (as ``what``), which stops the manager in
    order under its ``graceful_shutdown_timeout``: raising into the task group instead would
    cancel the sibling runnables at once, and they would drain on their own clocks before the
    manager even noticed (controller-runtime also reports a runnable's error to the manager).
    A failure before it started is raised to the caller awaiting the start (``tg.start``).
    """
    awaited = task_status is not anyio.TASK_STATUS_IGNORED
    status = _Started(task_status)
    try:
        with stop.bound():
            await run(task_status=status)
    except Exception as exc:
        if awaited and not status.ready:
            raise
        failed(what, exc)


def _describe(runnable: object) -> str:
    """A short name for a runnable in messages: ``Controller replicaset``."""
    kind = type(runnable).__name__
    name = getattr(runnable, "name", None)
    return f"{kind} {name}" if isinstance(name, str) and name else kind


def _plain(exc: Exception) -> Exception:
    """A task group's single error instead of the group holding it."""
    if isinstance(exc, ExceptionGroup):
        leaf = _unwrap(exc)
        if isinstance(leaf, Exception):
            return leaf
    return exc


def _unwrap(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one real error of a task group (nested groups flattened), else the group."""
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(reversed(exc.exceptions))
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else group


SignalReceiver = Callable[[], AbstractContextManager[AsyncIterator[signal_module.Signals]]]


async def run_until_signal(
    manager: Manager,
    *,
    signals: Sequence[signal_module.Signals] = (signal_module.SIGINT, signal_module.SIGTERM),
    receiver: SignalReceiver | None = None,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> signal_module.Signals | None:
    """Run ``manager`` until one of ``signals`` arrives, then shut it down gracefully.

    A second signal during the graceful shutdown stops at once (:meth:`Manager.force_stop`),
    as Kubernetes components and controller-runtime's ``SetupSignalHandler`` exit on it.

    Args:
        manager: the manager to run.
        signals: what stops it (SIGINT and SIGTERM, as controller-runtime).
        receiver: where signals come from (default ``anyio.open_signal_receiver(*signals)``,
            which needs the main thread); tests inject a fake.
        task_status: started once the signal receiver is installed and the manager started.

    Returns:
        The first signal that stopped the manager (None if the manager returned by itself).

    Raises:
        Whatever :meth:`Manager.run` raises.
    """
    open_receiver: SignalReceiver = receiver or partial(anyio.open_signal_receiver, *signals)
    received: list[signal_module.Signals] = []
    try:
        # The receiver outlives the task group: the watcher is cancelled before it closes.
        with open_receiver() as incoming:
            async with anyio.create_task_group() as tg:
                running = anyio.CancelScope()

                async def watch() -> None:
                    async for signum in incoming:
                        received.append(signum)
                        if len(received) == 1:
                            logger.info("manager: received %s, shutting down", signum.name)
                            running.cancel()
                        else:
                            logger.warning(
                                "manager: received %s during shutdown, stopping at once",
                                signum.name,
                            )
                            manager.force_stop()
                            return

                tg.start_soon(watch, name="signal receiver")
                try:
                    with running:
                        await manager.run(task_status=task_status)
                finally:
                    tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise _unwrap(group) from None
    return received[0] if received else None
