"""The garbage collector: cascading deletion through ownerReferences (kube's ``garbagecollector``).

Metadata-only informers ("monitors") over every resource discovery lists with ``list``,
``watch`` and ``delete`` feed the ownership :class:`~._graph.Graph`; two work queues of uids,
attemptToDelete and attemptToOrphan, act on it with live reads and writes. Discovery is re-run
every ``resync_period`` seconds and whenever a CustomResourceDefinition changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, Unpack, final

import anyio
import anyio.abc
from anyio.abc import TaskStatus

from kcm.client import ApiClient, server_preferred_resources
from kcm.clock import move_on_after
from kcm.controllerkit import ControllerBase, ControllerOptions
from kcm.errors import Conflict, NotFound
from kcm.informers import (
    HandlerRegistration,
    SharedIndexInformer,
    SharedInformerFactory,
    strip_managed_fields,
)
from kcm.models import (
    PartialObjectMetadata,
    ResourceInfo,
    model_for,
    resource_info_for,
    to_dict,
)
from kcm.models.apiextensions_v1 import CustomResourceDefinition
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.runtime import ReconcileFunc, Result

from ._graph import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Graph, Identity, Node, coordinates

__all__ = ["DEFAULT_IGNORED_RESOURCES", "GarbageCollectorController", "filter_verbs"]

logger = logging.getLogger(__name__)

DEFAULT_IGNORED_RESOURCES: frozenset[tuple[str, str]] = frozenset(
    {("", "events"), ("events.k8s.io", "events")}
)
"""(group, plural) pairs the collector never monitors (kube's default: events)."""

_CONFLICT_RETRIES = 5
_ORPHAN_CONCURRENCY = 16


def filter_verbs(resources: Iterable[ResourceInfo], *verbs: str) -> list[ResourceInfo]:
    """The resources that support every one of ``verbs`` (the collector monitors those with
    ``delete``, ``list`` and ``watch``)."""
    return [r for r in resources if all(v in r.verbs for v in verbs)]


class _VirtualDelete(Exception):
    """The item is gone (or another incarnation): a virtual delete was applied to the graph."""


class _NamespacedOwnerOfClusterScoped(Exception):
    """A cluster-scoped object names a namespaced owner: never resolvable, not retried."""


class _Monitor:
    __slots__ = ("informer", "owned", "registration", "resource", "scope")

    def __init__(
        self,
        resource: ResourceInfo,
        informer: SharedIndexInformer[Any],
        registration: HandlerRegistration,
        *,
        owned: bool,
    ) -> None:
        self.resource = resource
        self.informer = informer
        self.registration = registration  # synced = the graph holds the initial list
        self.owned = owned
        """The collector's own informer (run and stopped here), not the shared factory's."""
        self.scope = anyio.CancelScope()

    def stop(self) -> None:
        self.registration.remove()
        if self.owned:
            self.scope.cancel()


class _MonitorHandler:
    """Feeds one resource's informer events into the graph (synchronously)."""

    __slots__ = ("api_version", "graph", "kind")

    def __init__(self, graph: Graph, resource: ResourceInfo) -> None:
        self.graph = graph
        self.api_version = resource.api_version
        self.kind = resource.kind

    def on_add(self, obj: PartialObjectMetadata, *, is_in_initial_list: bool) -> None:
        self.graph.observe(self.api_version, self.kind, obj.metadata)

    def on_update(self, old: PartialObjectMetadata, new: PartialObjectMetadata) -> None:
        self.graph.observe(self.api_version, self.kind, new.metadata, old.metadata)

    def on_delete(self, obj: PartialObjectMetadata, *, final_state_unknown: bool) -> None:
        self.graph.forget(self.api_version, self.kind, obj.metadata)


class _CrdHandler:
    """Any CRD change after the initial list triggers a rediscovery."""

    __slots__ = ("changed",)

    def __init__(self, changed: Callable[[], None]) -> None:
        self.changed = changed

    def on_add(self, obj: object, *, is_in_initial_list: bool) -> None:
        if not is_in_initial_list:
            self.changed()

    def on_update(self, old: object, new: object) -> None:
        self.changed()

    def on_delete(self, obj: object, *, final_state_unknown: bool) -> None:
        self.changed()


def _is_builtin(resource: ResourceInfo) -> bool:
    """A kind kcm has a model for, served at the version the model is for."""
    try:
        model = model_for(resource.api_version, resource.kind)
    except (KeyError, LookupError, ValueError):
        return False
    if model is None:
        return False
    try:
        info = resource_info_for(model)
    except (KeyError, LookupError, ValueError, AttributeError):
        return False
    return info.plural == resource.plural


def _event_object(identity: Identity) -> PartialObjectMetadata:
    return PartialObjectMetadata(
        api_version=identity.api_version,
        kind=identity.kind,
        metadata=ObjectMeta(
            name=identity.name, namespace=identity.namespace or None, uid=identity.uid
        ),
    )


@final
class GarbageCollectorController(ControllerBase):
    """Deletes objects whose owners are gone; runs foreground and orphan propagation.

    Args:
        client: the API client (monitors, live reads, patches and deletes).
        factory: the shared informer factory. Monitors of built-in kinds use its informers:
            a typed informer another controller on the same factory already asked for (one
            cache for both), else its metadata-only informer. Monitors of other kinds (CRDs,
            aggregated APIs) are the collector's own informers, so a monitor of a resource
            that disappears can be stopped (the factory cannot stop one informer). The
            CustomResourceDefinition metadata informer (rediscovery trigger) comes from it.
        recorder: event sink (``OwnerRefInvalidNamespace`` warnings).
        clock: time for backoff, rediscovery and sync timeouts.
        workers: workers for each of the two queues (``--concurrent-gc-syncs``, 20).
        registry: Prometheus registry for the two queues' controller and workqueue metrics
            (``garbage_collector_attempt_to_delete``, ``garbage_collector_attempt_to_orphan``).
        resync_period: seconds between rediscoveries (kube: 30).
        ignored_resources: (group, plural) pairs never monitored.
        sync_timeout: how long :meth:`run` waits for the first monitors to list into the
            graph before starting the workers anyway (a monitor that cannot list is retried
            in the background). Monitors started by a later rediscovery are not waited for.

    Guarantees:
        * An object is deleted only after a live GET shows every owner absent (NotFound, or
          another uid), or waiting for its dependents (foreground); deletes carry uid and
          resourceVersion preconditions.
        * A namespaced owner is looked up in the dependent's namespace, so an owner in
          another namespace counts as absent for namespaced dependents (with a
          ``OwnerRefInvalidNamespace`` warning once the owner is observed elsewhere); a
          cluster-scoped object naming a namespaced owner is never deleted (warning, no retry).

    Caveats:
        * Nodes of a resource whose monitor was stopped stay in the graph until they are
          referenced and verified again (as kube).
    """

    default_workers = 20

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        resync_period: float = 30.0,
        ignored_resources: Iterable[tuple[str, str]] = DEFAULT_IGNORED_RESOURCES,
        sync_timeout: float = 60.0,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        self._factory = factory
        self._resync_period = resync_period
        self._ignored = frozenset(ignored_resources)
        self._sync_timeout = sync_timeout
        self.attempt_to_delete = self.new_controller(
            "garbage_collector_attempt_to_delete", ReconcileFunc(self._attempt_to_delete)
        )
        self.attempt_to_orphan = self.new_controller(
            "garbage_collector_attempt_to_orphan", ReconcileFunc(self._attempt_to_orphan)
        )
        self.graph = Graph(
            attempt_to_delete=self.attempt_to_delete.queue.add,
            attempt_to_delete_later=self.attempt_to_delete.queue.add_rate_limited,
            attempt_to_orphan=self.attempt_to_orphan.queue.add,
            invalid_namespace=self._report_invalid_namespace,
        )
        self._monitors: dict[tuple[str, str], _Monitor] = {}
        self._crds = factory.metadata_informer(CustomResourceDefinition)
        self._tg: anyio.abc.TaskGroup | None = None
        self._rediscover = anyio.Event()
        self.discoveries = 0
        """How many discovery passes have completed (for tests and debugging)."""

    def __repr__(self) -> str:
        return (
            f"<GarbageCollectorController monitors={len(self._monitors)} nodes={len(self.graph)}>"
        )

    @property
    def monitored(self) -> list[ResourceInfo]:
        """The resources currently monitored."""
        return [m.resource for m in self._monitors.values()]

    # -- lifecycle ---------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Discover, start the monitors, wait for them to list, then collect until cancelled.

        ``task_status.started()`` is called once the workers run.
        """
        registration = self._crds.add_event_handler(_CrdHandler(self._crd_changed))
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                while not await self._sync_monitors(wait=True):
                    await self._clock.sleep(min(self._resync_period, 5.0))
                await tg.start(self.attempt_to_delete.run)
                await tg.start(self.attempt_to_orphan.run)
                tg.start_soon(self._rediscovery_loop)
                task_status.started()
        finally:
            registration.remove()
            for monitor in self._monitors.values():
                monitor.registration.remove()  # shared informers outlive the collector
            self._monitors.clear()
            self._tg = None

    def _crd_changed(self) -> None:
        self._rediscover.set()

    async def _rediscovery_loop(self) -> None:
        while True:
            async with move_on_after(self._clock, self._resync_period):
                await self._rediscover.wait()
            self._rediscover = anyio.Event()
            # no waiting here: workers keep running and every decision is made on live reads,
            # so a new monitor that is still listing (or never can) delays nothing
            await self._sync_monitors(wait=False)

    async def _sync_monitors(self, *, wait: bool) -> bool:
        """Start monitors for new resources, stop those for vanished ones; with ``wait``,
        wait for the new ones to list into the graph (up to ``sync_timeout``). Returns False
        if discovery failed entirely."""
        try:
            found = await server_preferred_resources(self._client)
        except Exception as exc:
            logger.warning("garbage collector: discovery failed, will retry: %s", exc)
            return False
        self.discoveries += 1
        failed_groups = {gv.rpartition("/")[0] for gv in found.failed}
        if found.failed:
            logger.info("garbage collector: discovery failed for %s", sorted(found.failed))
        wanted = {
            (r.group, r.plural): r
            for r in filter_verbs(found.resources, "delete", "list", "watch")
            if (r.group, r.plural) not in self._ignored
        }
        for key, monitor in list(self._monitors.items()):
            target = wanted.get(key)
            if target is None and key[0] in failed_groups:
                continue  # not seen because its group failed: keep it
            if target is None or target.version != monitor.resource.version:
                monitor.stop()
                del self._monitors[key]
        started: list[_Monitor] = []
        for key, resource in wanted.items():
            if key not in self._monitors:
                started.append(self._start_monitor(resource))
        if started and wait:
            async with move_on_after(self._clock, self._sync_timeout) as scope:
                for monitor in started:
                    await monitor.registration.wait_synced()
            if scope.cancelled_caught:
                slow = [m.resource.plural for m in started if not m.registration.has_synced]
                logger.warning("garbage collector: monitors not synced yet: %s", slow)
        return True

    def _shared_informer(self, resource: ResourceInfo) -> SharedIndexInformer[Any] | None:
        """The shared factory's informer for ``resource``: a typed cluster-wide one another
        controller already asked for (Pods, ReplicaSets...: one cache for everybody, as
        kube-controller-manager's ``ObjectOrMetadataInformerFactory``), else the factory's
        metadata-only informer for a built-in kind. None for other kinds (CRDs, aggregated
        APIs): they can disappear, and the factory cannot stop one informer, so the
        collector runs its own for them."""
        resource_id = f"{resource.api_version}/{resource.plural}"
        for key, informer in self._factory.informers().items():
            if (
                key.resource == resource_id
                and not key.namespace
                and not key.label_selector
                and not key.field_selector
            ):
                return informer
        if not _is_builtin(resource):
            return None
        # managedFields stripped when this call creates the informer (the first asker
        # configures a shared informer, as with ``informer_for``'s transform)
        return self._factory.metadata_informer(resource, transform=strip_managed_fields)

    def _start_monitor(self, resource: ResourceInfo) -> _Monitor:
        assert self._tg is not None
        handler = _MonitorHandler(self.graph, resource)
        shared = self._shared_informer(resource)
        if shared is not None:
            monitor = _Monitor(resource, shared, shared.add_event_handler(handler), owned=False)
        else:
            informer: SharedIndexInformer[PartialObjectMetadata] = SharedIndexInformer(
                self._client.api(PartialObjectMetadata, resource=resource),
                transform=strip_managed_fields,
                resource=resource.plural,
                clock=self._clock,
            )
            registration = informer.add_event_handler(handler)
            monitor = _Monitor(resource, informer, registration, owned=True)
            self._tg.start_soon(self._run_monitor, monitor)
        self._monitors[(resource.group, resource.plural)] = monitor
        return monitor

    @staticmethod
    async def _run_monitor(monitor: _Monitor) -> None:
        with monitor.scope:
            await monitor.informer.run()

    # -- API helpers -------------------------------------------------------------------------

    async def _resource(self, api_version: str, kind: str) -> ResourceInfo:
        return await self._client.discover(api_version, kind)

    def _api(self, resource: ResourceInfo, namespace: str) -> Any:
        return self._client.api(
            PartialObjectMetadata, namespace if resource.namespaced else None, resource=resource
        )

    async def _get(self, identity: Identity) -> PartialObjectMetadata | None:
        """The live object with this identity's name; None if NotFound."""
        resource = await self._resource(identity.api_version, identity.kind)
        try:
            obj: PartialObjectMetadata = await self._api(resource, identity.namespace).get(
                identity.name
            )
        except NotFound:
            return None
        return obj

    async def _patch_meta(
        self, identity: Identity, change: Any, *, expect_uid: bool = True
    ) -> bool:
        """Read-modify-write of one object's metadata with its resourceVersion as a guard.

        ``change(meta) -> dict | None`` returns the metadata fields to merge (None: nothing
        to do). Retries on Conflict. Returns False if the object (this uid) is gone.
        """
        resource = await self._resource(identity.api_version, identity.kind)
        api = self._api(resource, identity.namespace)
        for attempt in range(_CONFLICT_RETRIES):
            try:
                live: PartialObjectMetadata = await api.get(identity.name)
            except NotFound:
                return False
            if expect_uid and live.metadata.uid != identity.uid:
                return False
            fields = change(live.metadata)
            if fields is None:
                return True
            fields["resourceVersion"] = live.metadata.resource_version
            try:
                await api.patch(identity.name, {"metadata": fields})
                return True
            except NotFound:
                return False
            except Conflict:
                if attempt == _CONFLICT_RETRIES - 1:
                    raise
        return True

    async def _remove_finalizer(self, identity: Identity, finalizer: str) -> None:
        def change(meta: ObjectMeta) -> dict[str, Any] | None:
            finalizers = list(meta.finalizers or ())
            if finalizer not in finalizers:
                return None
            rest = [f for f in finalizers if f != finalizer]
            return {"finalizers": rest or None}

        await self._patch_meta(identity, change)

    async def _remove_owner_refs(self, identity: Identity, uids: set[str]) -> None:
        def change(meta: ObjectMeta) -> dict[str, Any] | None:
            refs = list(meta.owner_references or ())
            rest = [r for r in refs if r.uid not in uids]
            if len(rest) == len(refs):
                return None
            return {"ownerReferences": [to_dict(r) for r in rest] or None}

        await self._patch_meta(identity, change)

    async def _unblock_owner_refs(self, identity: Identity) -> None:
        def change(meta: ObjectMeta) -> dict[str, Any] | None:
            refs = list(meta.owner_references or ())
            if not any(r.block_owner_deletion for r in refs):
                return None
            out = []
            for r in refs:
                d = to_dict(r)
                if r.block_owner_deletion:
                    d["blockOwnerDeletion"] = False
                out.append(d)
            return {"ownerReferences": out}

        await self._patch_meta(identity, change)

    async def _delete(self, identity: Identity, latest: ObjectMeta, policy: str) -> None:
        resource = await self._resource(identity.api_version, identity.kind)
        logger.debug("garbage collector: deleting %s (%s)", identity, policy)
        try:
            await self._api(resource, identity.namespace).delete(
                identity.name,
                propagation_policy=policy,
                preconditions={"uid": identity.uid, "resourceVersion": latest.resource_version},
            )
        except NotFound:
            self._virtual_delete(identity)
            raise _VirtualDelete from None

    def _virtual_delete(self, identity: Identity) -> None:
        self.graph.forget(
            identity.api_version,
            identity.kind,
            ObjectMeta(name=identity.name, namespace=identity.namespace or None, uid=identity.uid),
            virtual=True,
        )

    def _report_invalid_namespace(self, node: Node, ref: OwnerReference) -> None:
        owner = coordinates(ref, node.identity.namespace)
        self._warn_invalid_namespace(
            node, f"ownerRef {owner} does not exist in namespace {node.identity.namespace!r}"
        )

    def _warn_invalid_namespace(self, node: Node, message: str) -> None:
        self._recorder.event(
            _event_object(node.identity), "Warning", "OwnerRefInvalidNamespace", message
        )

    # -- attemptToDelete ---------------------------------------------------------------------

    async def _attempt_to_delete(self, uid: str) -> Result:
        node = self.graph.get(uid)
        if node is None:
            return Result()
        try:
            await self._attempt_to_delete_item(node)
        except (_VirtualDelete, _NamespacedOwnerOfClusterScoped):
            return Result()
        except NotFound as exc:  # the owner's or item's kind is not served (yet)
            logger.info("garbage collector: cannot resolve a kind for %s: %s", node.identity, exc)
            return Result(requeue=True)
        if node.virtual and self.graph.get(uid) is node:
            return Result(requeue=True)  # exists but not observed by a monitor yet
        return Result()

    async def _attempt_to_delete_item(self, node: Node) -> None:
        if node.being_deleted and not node.deleting_dependents:
            return  # a one-way trip: its dependents are handled once it is gone
        identity = node.identity
        latest = await self._get(identity)
        if latest is None or latest.metadata.uid != identity.uid:
            self._virtual_delete(identity)
            raise _VirtualDelete
        if node.deleting_dependents:
            await self._process_deleting_dependents(node)
            return
        refs = list(latest.metadata.owner_references or ())
        if not refs:
            return
        solid, dangling, waiting = await self._classify(node, refs)
        if solid:
            if dangling or waiting:
                await self._remove_owner_refs(
                    identity, {r.uid or "" for r in (*dangling, *waiting)}
                )
            return
        if waiting and node.dependents:
            if any(dep.deleting_dependents for dep in node.dependents):
                # a possible cycle: make our own refs non-blocking before cascading
                await self._unblock_owner_refs(identity)
            await self._delete(identity, latest.metadata, "Foreground")
            return
        finalizers = latest.metadata.finalizers or ()
        if ORPHAN_FINALIZER in finalizers:
            policy = "Orphan"
        elif FOREGROUND_FINALIZER in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        await self._delete(identity, latest.metadata, policy)

    async def _process_deleting_dependents(self, node: Node) -> None:
        blocking = node.blocking_dependents()
        if not blocking:
            await self._remove_finalizer(node.identity, FOREGROUND_FINALIZER)
            return
        for dep in blocking:
            if not dep.deleting_dependents:
                self.attempt_to_delete.queue.add(dep.identity.uid)

    async def _classify(
        self, node: Node, refs: list[OwnerReference]
    ) -> tuple[list[OwnerReference], list[OwnerReference], list[OwnerReference]]:
        solid: list[OwnerReference] = []
        dangling: list[OwnerReference] = []
        waiting: list[OwnerReference] = []
        for ref in refs:
            owner = await self._owner(node, ref)
            if owner is None:
                dangling.append(ref)
            elif owner.deletion_timestamp is not None and FOREGROUND_FINALIZER in (
                owner.finalizers or ()
            ):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    async def _owner(self, node: Node, ref: OwnerReference) -> ObjectMeta | None:
        """The live owner's metadata, or None if the reference dangles."""
        absent = self.graph.absent
        key = coordinates(ref)
        if key in absent:
            return None
        namespace = node.identity.namespace
        key = key._replace(namespace=namespace)
        if key in absent:
            return None
        resource = await self._resource(ref.api_version or "", ref.kind or "")
        if not resource.namespaced:
            key = key._replace(namespace="")
        elif not namespace:
            self._warn_invalid_namespace(
                node, f"cluster-scoped object cannot have the namespaced owner {coordinates(ref)}"
            )
            raise _NamespacedOwnerOfClusterScoped
        try:
            owner: PartialObjectMetadata = await self._api(resource, namespace).get(ref.name or "")
        except NotFound:
            absent[key] = True
            return None
        if owner.metadata.uid != ref.uid:
            absent[key] = True
            return None
        return owner.metadata

    # -- attemptToOrphan ---------------------------------------------------------------------

    async def _attempt_to_orphan(self, uid: str) -> Result:
        node = self.graph.get(uid)
        if node is None:
            return Result()
        limiter = anyio.CapacityLimiter(_ORPHAN_CONCURRENCY)
        errors: list[Exception] = []

        async def orphan(dep: Node) -> None:
            async with limiter:
                try:
                    await self._remove_owner_refs(dep.identity, {uid})
                except NotFound:
                    pass
                except Exception as exc:
                    errors.append(exc)

        async with anyio.create_task_group() as tg:
            for dep in list(node.dependents):
                tg.start_soon(orphan, dep)
        if errors:
            raise RuntimeError(
                f"orphaning the dependents of {node.identity} failed: "
                + "; ".join(str(e) for e in errors)
            ) from errors[0]
        await self._remove_finalizer(node.identity, ORPHAN_FINALIZER)
        return Result()
