"""``kcm run``: build the client, the manager, the controllers and (maybe) the embedded
cluster, then run until SIGINT/SIGTERM.

One code path for both modes: embedded mode only adds an :class:`~kcm.apiserver.ApiServer`
in front (and, by default, the simulation); everything after the client is the same as
against a real cluster.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import importlib.util
import logging
import os
import signal
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import anyio
import msgspec
from prometheus_client import CollectorRegistry

from .._version import __version__
from ._api_wait import probe_api_server, wait_for_api_server
from ._cloud import cloud_provider_name, load_cloud
from ._event_loop import run_event_loop
from ._logging import configure_logging
from ._secure_serving import (
    add_controller_checks,
    log_accepted_flags,
    metrics_registry,
    serving_options,
)
from ._settings import RunSettings
from ._tracing import start_tracing

__all__ = [
    "log_ignored_flags",
    "run",
    "serve",
    "warn_if_kube_controller_manager_leads",
]

logger = logging.getLogger("kcm.cli")

STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""What stops kcm gracefully: kube-controller-manager's SIGINT and SIGTERM, plus SIGHUP (a
closed terminal), so a laptop session that ends still releases the lease."""


SERVICE_ACCOUNT_DIR_ENV = "KCM_SERVICE_ACCOUNT_DIR"
"""Where the in-cluster ServiceAccount token, ca.crt and namespace are (default
``/var/run/secrets/kubernetes.io/serviceaccount``, as client-go's)."""


def __getattr__(name: str) -> Any:
    """``DataDirLocked`` (kcm.apiserver's), imported when asked for: ``kcm --help`` works
    without the ``server`` extra."""
    if name == "DataDirLocked":
        from kcm.apiserver import DataDirLocked

        return DataDirLocked
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _locked_hint(data_dir: Path) -> str:
    return (
        "is another kcm running? stop it, or run this one with another --data-dir (it serves "
        "its health port on a free port if the first holds 10257), or join that cluster as a "
        f"standby with --kubeconfig={data_dir / 'kubeconfig'} --secure-port=0"
    )


@contextlib.contextmanager
def _lock_data_dir(data_dir: Path) -> Iterator[None]:
    """Hold the data directory as the embedded server does (its lock, kcm's advice)."""
    from kcm.apiserver import DataDirLock, DataDirLocked

    try:
        lock = DataDirLock(data_dir)
    except DataDirLocked as exc:
        raise DataDirLocked(exc.path, exc.pid, _locked_hint(data_dir)) from None
    with lock:
        yield


def _client_config(settings: RunSettings, environ: Mapping[str, str]) -> Any:
    """The ClientConfig for an external cluster (--kubeconfig/--master/$KUBECONFIG/in-cluster)."""
    from kcm.client import ClientConfig, in_cluster_config, load_kubeconfig

    if settings.kubeconfig:
        config = load_kubeconfig(settings.kubeconfig)
    elif environ.get("KUBECONFIG") and not settings.master:
        config = load_kubeconfig(environ["KUBECONFIG"].split(os.pathsep))
    elif settings.master:
        config = ClientConfig(server=settings.master, source="--master")
    else:  # a pod: the mounted ServiceAccount (KCM_SERVICE_ACCOUNT_DIR moves the mount)
        config = in_cluster_config(
            environ=environ, service_account_dir=environ.get(SERVICE_ACCOUNT_DIR_ENV) or None
        )
    if settings.master:
        config = msgspec.structs.replace(config, server=settings.master)
    return config


def _lock(client: Any, settings: RunSettings) -> Any:
    """The ``--leader-elect-resource-lock`` on ``client`` (one identity for both halves of
    ``configmapsleases``)."""
    from kcm.leaderelection import ConfigMapLock, LeaseLock, MultiLock, default_identity

    identity = default_identity()
    name, namespace = settings.resource_name, settings.resource_namespace
    lease = LeaseLock(client, name, namespace, identity=identity)
    if settings.resource_lock == "leases":
        return lease
    return MultiLock(ConfigMapLock(client, name, namespace, identity=identity), lease)


_INSECURE_WARNING = (
    "warning: the embedded API server serves plain HTTP without authentication "
    "(--apiserver-insecure-http): anyone who can reach its port is a cluster administrator"
)


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def _banner(out: TextIO, server_url: str, settings: RunSettings, simulate: bool) -> None:
    lines = [
        f"kcm {__version__}: embedded API server on {server_url} (state in {settings.data_dir})",
    ]
    if simulate:
        names = settings.simulation.node_names()
        if names:
            lines.append(
                f"kcm: simulating {len(names)} Ready node(s) ({names[0]}..{names[-1]}); "
                "pods are scheduled, run and completed for you"
            )
    lines += [
        "kcm: point kubectl at it with:",
        "",
        f"    export KUBECONFIG={settings.kubeconfig_path}",
        "    kubectl get nodes",
        "",
    ]
    print("\n".join(lines), file=out, flush=True)


class _ControllerView:
    """The manager as one controller sees it: everything shared (factory, clock, registry,
    events, ``add``) except :attr:`client`, which is the controller's own, and with
    :attr:`feature_gates` (``--feature-gates``).

    kube-controller-manager builds one client per controller, each with its own
    ``--kube-api-qps``/``--kube-api-burst`` rate limiter and user agent, so a controller that
    issues many requests (the garbage collector listing every resource at start, a
    ReplicaSet creating hundreds of pods) never delays another one's writes.
    """

    def __init__(self, manager: Any, client: Any, feature_gates: Any = None) -> None:
        self._manager = manager
        self.client = client
        self.feature_gates = feature_gates  # kcm.controllerkit.feature_gates reads it

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)


async def _add_controllers(
    manager: Any,
    settings: RunSettings,
    config: Any,
    stack: contextlib.AsyncExitStack,
    cloud: Any = None,
) -> list[str]:
    """Add every enabled controller, each on its own client; returns those that could not
    be started or are disabled by their settings (logged as kube-controller-manager's
    "Skipping").

    Cloud controllers get ``cloud`` (and ``--cluster-name``); without one they are skipped.

    Raises:
        ConfigError: a controller's flag value is unusable (kube-controller-manager exits).
    """
    from kcm.controllerkit import FeatureGates
    from kcm.controllers import CONTROLLERS, ControllerDisabled
    from kcm.errors import ConfigError

    gates = FeatureGates(settings.feature_gates)
    tokens = None
    if settings.use_service_account_credentials:
        from ._identities import ServiceAccountTokens

        tokens = ServiceAccountTokens(await _client(stack, config, "controller-client-builder"))

    failed: list[str] = []
    workers = settings.workers or {}
    options = settings.controller_options or {}
    # The manager starts controllers one after the other, in the order added: by start_order
    # (serviceaccount-token first, the garbage collector last), else in registry order.
    for name in sorted(settings.controllers, key=lambda n: CONTROLLERS[n].start_order):
        spec = CONTROLLERS[name]
        extra: dict[str, Any] = {}
        if spec.cloud:
            if cloud is None:
                logger.info("Skipping controller %s: no cloud provider here", name)
                failed.append(name)
                continue
            extra = {"cloud": cloud, "cluster_name": settings.cluster_name}
        try:
            spec.load()
        except ImportError as exc:
            logger.error("Skipping controller %s: %s", name, exc)
            failed.append(name)
            continue
        client = await _controller_client(stack, config, name, tokens)
        try:
            ignored = spec.add_to_manager(
                _ControllerView(manager, client, gates),
                workers=workers.get(name, spec.default_workers),
                **dict(options.get(name, {})),
                **extra,
            )
        except ControllerDisabled as exc:  # kube: '"x" is disabled because ...', "Skipping"
            logger.warning("Skipping controller %s: %s", name, exc)
            failed.append(name)
            continue
        except ConfigError:  # a bad flag value (an unreadable key file): kcm exits, as kube
            raise
        except Exception as exc:
            logger.error("Skipping controller %s: %s", name, exc)
            failed.append(name)
            continue
        for option in ignored:
            logger.warning("controller %s does not take %s; ignored", name, option)
        logger.debug("controller %s added", name)
    return failed


async def serve(
    settings: RunSettings,
    *,
    environ: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    status_view: bool = False,
    receiver: Any = None,
) -> signal.Signals | None:
    """Run kcm until a signal arrives (or the manager stops by itself).

    Args:
        settings: the parsed settings.
        environ: the environment (default ``os.environ``), for embedded-mode detection and
            ``$KUBECONFIG``.
        out: where the embedded-mode banner goes (default stdout).
        status_view: show the live terminal summary.
        receiver: signal receiver factory for tests (see ``kcm.runtime.run_until_signal``).

    Returns:
        The signal that stopped kcm.

    Raises:
        kcm.errors.ConfigError, kcm.errors.LeaderElectionLost,
        kcm.errors.GracefulShutdownTimeout (the shutdown after the signal outlived the
        manager's grace period), DataDirLocked, OSError and whatever the manager raises.
    """
    from kcm.client import observe_requests, trace_requests
    from kcm.runtime import trace_reconciles

    registry, requests = metrics_registry()
    env = os.environ if environ is None else environ
    tracer, provider = start_tracing(settings.serving.tracing_config_file, env)
    try:
        with observe_requests(requests), trace_requests(tracer), trace_reconciles(tracer):
            return await _serve(settings, environ, out, status_view, receiver, registry)
    except BaseExceptionGroup as group:
        raise _single(group) from None
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still batched


async def _client(
    stack: contextlib.AsyncExitStack,
    config: Any,
    component: str,
    *,
    token_source: Any = None,
    user: str = "",
    **changes: Any,
) -> Any:
    """A new ApiClient on ``config`` for ``component`` (its user agent, with ``/user`` appended
    as kube's ``AddUserAgent``), closed with ``stack``; ``token_source`` replaces the config's
    credentials."""
    from kcm.client import ApiClient

    agent = f"kcm/{__version__} ({component})" + (f"/{user}" if user else "")
    return await stack.enter_async_context(
        ApiClient(
            msgspec.structs.replace(config, user_agent=agent, **changes),
            token_source=token_source,
        )
    )


async def _controller_client(
    stack: contextlib.AsyncExitStack, config: Any, name: str, tokens: Any
) -> Any:
    """Controller ``name``'s own client: kcm's credentials, or with
    ``--use-service-account-credentials`` (``tokens``) its ServiceAccount's, as kube's."""
    from ._identities import ROOT_CONTROLLERS, anonymous, client_name

    if tokens is None or name in ROOT_CONTROLLERS:
        return await _client(stack, config, f"{name}-controller")
    account = client_name(name)
    return await _client(
        stack,
        anonymous(config),
        f"{name}-controller",
        token_source=tokens.source(account),
        user=f"system:serviceaccount:kube-system:{account}",
    )


async def _connect(
    settings: RunSettings,
    env: Mapping[str, str],
    out: TextIO,
    *,
    embedded: bool,
    simulate: bool,
    stack: contextlib.AsyncExitStack,
) -> tuple[Any, str]:
    """The client configuration (with the QPS flags) and the server URL: the embedded
    server's, started here, or the cluster's."""
    if embedded:
        from kcm.apiserver import ApiServer, DataDirLocked
        from kcm.client import load_kubeconfig_dict

        secure = not settings.apiserver_insecure_http
        if not secure:
            print(_INSECURE_WARNING, file=sys.stderr, flush=True)
        try:
            api = ApiServer(
                data_dir=settings.data_dir,
                port=settings.apiserver_port,
                tls=secure,
                admission_plugins=settings.admission_plugins,
            )
        except DataDirLocked as exc:
            raise DataDirLocked(exc.path, exc.pid, _locked_hint(settings.data_dir)) from None
        server = await stack.enter_async_context(api)
        if settings.leader_elect and settings.apiserver_port == 0:
            await _release_stale_lease(load_kubeconfig_dict(server.kubeconfig()), settings)
        server.write_kubeconfig(settings.kubeconfig_path)
        _banner(out, server.url, settings, simulate)
        config, url = load_kubeconfig_dict(server.kubeconfig()), server.url
    else:
        config = _client_config(settings, env)
        url = config.server
    config = msgspec.structs.replace(
        config,
        qps=settings.kube_api_qps,
        burst=settings.kube_api_burst,
        # Its own server over loopback: gzip would cost CPU at both ends and save nothing.
        disable_compression=config.disable_compression or embedded,
    )
    return config, url


async def _release_stale_lease(config: Any, settings: RunSettings) -> None:
    """Release a lease a previous embedded kcm left behind (killed, crashed, terminal closed).

    Only called for a freshly started embedded server on a new port whose kubeconfig is not
    written yet: nobody else can reach it, so whoever holds the lease in the stored state is
    gone. Without this, a restart after a crash waits a full lease duration (15 s or more)
    before the controllers start.
    """
    from kcm.client import ApiClient
    from kcm.errors import KcmError
    from kcm.models import Lease

    async with ApiClient(config) as client:
        leases = client.api(Lease, namespace=settings.resource_namespace)
        try:
            lease = await leases.get(settings.resource_name)
        except KcmError:
            return  # no lease yet (first start) or unreadable: the elector handles it
        spec = lease.spec
        if spec is None or not spec.holder_identity:
            return
        released = msgspec.structs.replace(
            lease,
            spec=msgspec.structs.replace(spec, holder_identity="", lease_duration_seconds=1),
        )
        try:
            await leases.update(lease, released)
        except KcmError as exc:
            logger.warning("could not release the stale lease of %s: %s", spec.holder_identity, exc)
            return
        logger.info(
            "released the lease %s/%s left by %s (a kcm that did not stop cleanly)",
            settings.resource_namespace,
            settings.resource_name,
            spec.holder_identity,
        )


async def warn_if_kube_controller_manager_leads(client: Any, settings: RunSettings) -> bool:
    """Log a warning when kube-controller-manager's own lease is held and fresh while kcm runs
    on its own lease: both managers then lead at once and their controllers act on the same
    objects. Returns whether it warned (an unreadable lease is no warning)."""
    from kcm.errors import KcmError
    from kcm.models import Lease

    if settings.resource_name == "kube-controller-manager":
        return False
    try:
        lease = await client.api(Lease, namespace="kube-system").get("kube-controller-manager")
    except KcmError:
        return False
    spec = lease.spec
    if spec is None or not spec.holder_identity or spec.renew_time is None:
        return False
    expires = spec.renew_time.timestamp() + (spec.lease_duration_seconds or 15)
    if expires < client.clock.now().timestamp():
        return False
    logger.warning(
        "kube-controller-manager is running (kube-system/kube-controller-manager is held by %s): "
        "kcm leads on its own lease %s/%s, so both run controllers on the same objects; stop "
        "kube-controller-manager, run kcm only with controllers it lacks, or share its lease "
        "with --leader-elect-resource-name=kube-controller-manager",
        spec.holder_identity,
        settings.resource_namespace,
        settings.resource_name,
    )
    return True


async def _leader_election(
    settings: RunSettings, config: Any, stack: contextlib.AsyncExitStack
) -> Any:
    """The manager's leader-election options, on a client of their own (as
    kube-controller-manager's: renewals never queue behind the informers' LISTs)."""
    from kcm.runtime import LeaderElectionOptions

    if not settings.leader_elect:
        return None
    client = await _client(stack, config, "leader-election")
    await warn_if_kube_controller_manager_leads(client, settings)
    return LeaderElectionOptions(
        name=settings.resource_name,
        namespace=settings.resource_namespace,
        lease_duration=settings.leader_election.lease_duration,
        renew_deadline=settings.leader_election.renew_deadline,
        retry_period=settings.leader_election.retry_period,
        resource_lock=settings.resource_lock,  # type: ignore[arg-type]
        lock=_lock(client, settings),
    )


async def _add_simulation(
    manager: Any, settings: RunSettings, config: Any, stack: contextlib.AsyncExitStack
) -> None:
    """Add the simulated cluster (leader-gated, first) and its event broadcaster.

    The simulation plays other components (scheduler, kubelets), each with its own client in
    a real cluster, so its writes and events go through an unthrottled client and broadcaster
    of their own and never eat the controllers' QPS budget. The broadcaster runs on every
    replica, so it outlives the leader-gated simulation on shutdown.
    """
    from kcm.record import EventBroadcaster
    from kcm.simulation import SIMULATED_DRIVER, SimulatedCluster

    client = await _client(stack, config, "simulation", qps=-1)
    events = EventBroadcaster(client, clock=manager.clock, shutdown_timeout=1.0)
    manager.add(events, needs_leader_election=False)
    manager.add(
        SimulatedCluster(
            client,
            manager.factory,
            config=settings.simulation,
            clock=manager.clock,
            registry=manager.registry,
            scheduler_recorder=events.recorder("default-scheduler"),
            kubelet_recorder=events.recorder("kubelet"),
            provisioner_recorder=events.recorder(SIMULATED_DRIVER),
        )
    )


async def _serve(
    settings: RunSettings,
    environ: Mapping[str, str] | None,
    out: TextIO | None,
    status_view: bool,
    receiver: Any,
    registry: CollectorRegistry,
) -> signal.Signals | None:
    from kcm.runtime import Manager

    env = os.environ if environ is None else environ
    log_ignored_flags(settings)
    embedded = settings.embedded(env)
    log_accepted_flags(settings.serving.accepted)
    simulate = settings.simulating(embedded=embedded)
    async with contextlib.AsyncExitStack() as stack:
        config, server_url = await _connect(
            settings,
            env,
            sys.stdout if out is None else out,
            embedded=embedded,
            simulate=simulate,
            stack=stack,
        )
        shared = await _client(stack, config, "shared-informers")
        unreachable = not embedded and await probe_api_server(shared, server_url)
        bind = settings.health_bind_address(embedded=embedded)
        manager = Manager(
            shared,
            # events wait on a rate limiter of their own, not behind the informers' lists
            event_client=await _client(stack, config, "event-broadcaster"),
            registry=registry,
            leader_election=await _leader_election(settings, config, stack),
            health_address=f"{_host(bind)}:{settings.secure_port}"
            if settings.secure_port
            else None,
            serving=await serving_options(settings.serving, bind, env, stack, embedded=embedded)
            if settings.secure_port
            else None,
        )
        if simulate:  # first: nodes exist before the controllers (started in order) need them
            await _add_simulation(manager, settings, config, stack)
        cloud = load_cloud(
            cloud_provider_name(settings.cloud_provider, embedded=embedded), settings.cloud_config
        )
        if cloud is not None:
            cloud.initialize(manager.client, manager.factory)
        if embedded and settings.use_service_account_credentials:
            # the embedded server's RBAC has kube's roles only, which refuse kcm's PATCHes
            logger.warning(
                "--use-service-account-credentials has no effect in embedded mode: the "
                "controllers use kcm's own credentials (see docs/kcm.md, controller identities)"
            )
            settings = dataclasses.replace(settings, use_service_account_credentials=False)
        failed = await _add_controllers(manager, settings, config, stack, cloud)
        started = [n for n in settings.controllers if n not in failed]
        add_controller_checks(manager, started)
        logger.info(
            "kcm %s: %s mode against %s; controllers: %s%s; leader election %s",
            __version__,
            "embedded" if embedded else "cluster",
            server_url,
            ", ".join(started) or "none",
            f" (+ simulation of {settings.simulation.nodes} nodes)" if simulate else "",
            f"on ({settings.resource_namespace}/{settings.resource_name})"
            if settings.leader_elect
            else "off",
        )
        view = None
        if status_view:
            from ._status import StatusView

            view = StatusView(
                manager,
                controllers=started,
                server=server_url,
                simulated=simulate,
                kubeconfig=str(settings.kubeconfig_path) if embedded else None,
                clock=manager.clock,
            )
        if not embedded:  # after the flags' checks, so a bad flag is not hidden by the wait
            await wait_for_api_server(shared, server_url, failed_once=unreachable)
        received = await _run_manager(manager, view, receiver)
        if received is not None:
            logger.info("kcm stopped after %s", received.name)
        return received


def log_ignored_flags(settings: RunSettings) -> None:
    """One line per kube-controller-manager flag given that kcm accepts without effect."""
    for flag in settings.ignored_flags:
        logger.info("flag %s is accepted for compatibility and has no effect in kcm", flag)


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one real error inside nested exception groups (else the group itself)."""
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else group


async def _run_manager(manager: Any, view: Any, receiver: Any) -> signal.Signals | None:
    """Run the manager (and the status view beside it) until a signal."""
    from kcm.runtime import run_until_signal

    async with anyio.create_task_group() as tg:
        if view is not None:
            tg.start_soon(view.run)
        received = await run_until_signal(manager, signals=STOP_SIGNALS, receiver=receiver)
        tg.cancel_scope.cancel()
    return received


def _reported_errors() -> tuple[type[Exception], ...]:
    """What :func:`run` reports as one line: ConfigError, OSError, and kcm.apiserver's
    ``DataDirLocked`` once the server is imported (embedded mode; before, nothing can have
    raised it). Against a cluster kcm never imports the server (~0.3 s of CPU)."""
    from kcm.errors import ConfigError

    server = sys.modules.get("kcm.apiserver")
    locked = getattr(server, "DataDirLocked", None)
    return (ConfigError, OSError, locked) if locked is not None else (ConfigError, OSError)


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (an import hook that refuses
    it counts as not installed)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def run(settings: RunSettings, *, environ: Mapping[str, str] | None = None) -> int:
    """``kcm run``: configure logging, serve until SIGINT/SIGTERM, and return the exit code
    (0 after a signal and a clean shutdown; 1 when the manager fails, leadership is lost or
    the shutdown does not finish within the manager's grace period)."""
    from kcm.errors import GracefulShutdownTimeout, LeaderElectionLost

    view = settings.status_view == "on" or (settings.status_view == "auto" and sys.stdout.isatty())
    has_rich = view and _installed("rich")
    configure_logging(
        verbosity=settings.verbosity,
        fmt=settings.logging_format,
        rich_console=view and has_rich,
    )
    if view and not has_rich:
        logger.warning("the live status view needs the 'rich' package; logging instead")
        view = False
    try:
        run_event_loop(lambda: serve(settings, environ=environ, status_view=view))
    except GracefulShutdownTimeout as exc:  # before OSError: it is also a TimeoutError
        still = ", ".join(exc.runnables or exc.stages) or "nothing named"
        logger.error(
            "kcm did not stop cleanly: the shutdown outlived its %g s grace period and "
            "cancelled work in flight (%s); exiting with status 1. Details: %s",
            exc.timeout,
            still,
            exc,
        )
        return 1
    except _reported_errors() as exc:
        hint = ""
        if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
            hint = (
                f" (port {settings.secure_port} is taken: is another kcm running? "
                "pass --secure-port=0 or another port)"
            )
        print(f"kcm: error: {exc}{hint}", file=sys.stderr)
        return 1
    except LeaderElectionLost as exc:
        logger.error("%s", exc)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0
