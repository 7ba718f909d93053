"""The service (load-balancer) controller: a cloud balancer for each ``type: LoadBalancer``
Service (k8s.io/cloud-provider's ``controllers/service``).

* A Service that wants a balancer (type LoadBalancer, no ``loadBalancerClass``) gets the
  ``service.kubernetes.io/load-balancer-cleanup`` finalizer, then ``EnsureLoadBalancer`` with
  the eligible nodes, then its ``status.loadBalancer``; events EnsuringLoadBalancer and
  EnsuredLoadBalancer (UnAvailableLoadBalancer without eligible nodes).
* A Service that holds the finalizer and is deleting or no longer of type LoadBalancer has its
  balancer deleted (if the cloud says it exists), the finalizer removed and the status
  cleared; events DeletingLoadBalancer and DeletedLoadBalancer.
* Any failure: Warning SyncLoadBalancerFailed and a retry with backoff (5 s doubling to 300 s).
  ``ImplementedElsewhere`` from the cloud is skipped silently.
* Host sync: a change in the set of eligible nodes (and every 100 s) calls
  ``UpdateLoadBalancer`` for every Service with a balancer (UpdatedLoadBalancer,
  UpdateLoadBalancerFailed); failed ones are retried on the next round.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient, PatchType
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.cloudprovider import LOAD_BALANCER_CLEANUP_FINALIZER, CloudProvider, LoadBalancer
from kcm.controllerkit import cloud_support_refusal, log_failed_pass
from kcm.errors import ImplementedElsewhere, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, to_dict
from kcm.models.core_v1 import LoadBalancerStatus, Node, Service
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result
from kcm.workqueue import ItemExponentialFailureRateLimiter

from ._predicates import (
    has_finalizer,
    load_balancer_status_equal,
    needs_cleanup,
    needs_update,
    node_eligible,
    should_sync_node,
    wants_load_balancer,
)

__all__ = ["MAX_RETRY_DELAY", "MIN_RETRY_DELAY", "NODE_SYNC_PERIOD", "ServiceController"]

logger = logging.getLogger(__name__)

MIN_RETRY_DELAY = 5.0
"""The first retry of a failed Service, in seconds (doubling per failure)."""
MAX_RETRY_DELAY = 300.0
"""The longest wait between retries of a failed Service, in seconds."""
NODE_SYNC_PERIOD = 100.0
"""Seconds between host syncs when no node changes trigger one."""


def _key(service: Service) -> ObjectKey:
    return ObjectKey(service.metadata.namespace or "", service.metadata.name or "")


class _ServiceEvents:
    def __init__(self, owner: ServiceController) -> None:
        self._owner = owner

    def create_keys(self, obj: Service, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (_key(obj),) if wants_load_balancer(obj) or needs_cleanup(obj) else ()

    def update_keys(self, old: Service, new: Service) -> Iterable[ObjectKey]:
        def emit(reason: str, message: str) -> None:
            self._owner.recorder.event(new, "Normal", reason, message)

        if needs_update(old, new, emit) or needs_cleanup(new):
            return (_key(new),)
        return ()

    def delete_keys(self, obj: Service, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        # A Service deleted without the finalizer (created before it, or by an older
        # controller) is cleaned up from the last state the controller saw.
        return (_key(obj),) if _key(obj) in self._owner.cached else ()


class _NodeEvents:
    """Node changes that may change the hosts trigger a host sync (informer handler)."""

    def __init__(self, owner: ServiceController) -> None:
        self._owner = owner

    def on_add(self, obj: Node, *, is_in_initial_list: bool) -> None:
        self._owner.trigger_node_sync()

    def on_update(self, old: Node, new: Node) -> None:
        if should_sync_node(old, new):
            self._owner.trigger_node_sync()

    def on_delete(self, obj: Node, *, final_state_unknown: bool) -> None:
        self._owner.trigger_node_sync()


@final
class ServiceController:
    """Keeps a cloud balancer for every ``type: LoadBalancer`` Service (see the module doc).

    Args:
        client: the API client (Service finalizer and status patches).
        factory: where the Service and Node informers come from.
        recorder: the ``service-controller`` event sink.
        clock: the clock retries and the host-sync period run on.
        workers: concurrent Service syncs (``--concurrent-service-syncs``, 1).
        registry: a Prometheus registry for the controller and queue metrics.
        cloud: the provider; it must support load balancers.
        cluster_name: ``--cluster-name`` (passed to every cloud call).
        node_sync_period: seconds between host syncs without node changes.

    Raises:
        ValueError: the provider has no load balancers.

    Attributes:
        cached: the last state seen of every Service the controller acted on (a Service
            deleted without the finalizer is cleaned up from it).
        node_syncs: completed host syncs (tests wait on it).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        cloud: CloudProvider,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        cluster_name: str = "kubernetes",
        node_sync_period: float = NODE_SYNC_PERIOD,
    ) -> None:
        balancer = cloud.load_balancer()
        if balancer is None:
            raise ValueError(cloud_support_refusal(cloud, "load balancers"))
        self._client = client
        self._balancer: LoadBalancer = balancer
        self._cloud = cloud
        self.recorder = recorder
        self._clock = clock
        self.cluster_name = cluster_name
        self._period = node_sync_period
        self.cached: dict[ObjectKey, Service] = {}
        self._known_hosts: set[str] | None = None
        self._full_sync = True
        self._to_retry: list[ObjectKey] = []
        self._wake = anyio.Event()
        self.node_syncs = 0
        service_informer = factory.informer_for(Service)
        self._node_informer = factory.informer_for(Node)
        self._services = service_informer.lister()
        self._nodes = self._node_informer.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "service",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=ItemExponentialFailureRateLimiter(
                MIN_RETRY_DELAY, MAX_RETRY_DELAY, clock=clock
            ),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(service_informer, _ServiceEvents(self), kind="Service")
        registration = self._node_informer.add_event_handler(_NodeEvents(self))
        self.controller.wait_for([registration], kind="Node", informer=self._node_informer)

    def __repr__(self) -> str:
        return f"<ServiceController cloud={self._cloud.provider_name} cached={len(self.cached)}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync Services and run the host-sync loop until cancelled."""
        async with anyio.create_task_group() as tg:
            await tg.start(self.controller.run)
            tg.start_soon(self._node_sync_loop)
            task_status.started()

    # -- Services ------------------------------------------------------------------------

    async def reconcile(self, request: ObjectKey) -> Result:
        """Ensure or delete the balancer of one Service (raises to retry with backoff)."""
        service = self._services.get_or_none(request.namespace, request.name)
        if service is None:
            cached = self.cached.get(request)
            if cached is not None:
                await self._delete_without_finalizer(cached)
                self.cached.pop(request, None)
            return Result()
        cached = self.cached.get(request)
        if cached is not None and cached.metadata.uid != service.metadata.uid:
            await self._delete_without_finalizer(cached)  # deleted and re-created meanwhile
        self.cached[request] = service
        try:
            deleted = await self._sync(service)
        except Exception as exc:
            self.recorder.event(
                service, "Warning", "SyncLoadBalancerFailed", f"Error syncing load balancer: {exc}"
            )
            raise
        if deleted:
            self.cached.pop(request, None)
        return Result()

    async def _sync(self, service: Service) -> bool:
        """Returns True when the balancer was deleted (the Service is forgotten)."""
        previous = service.status.load_balancer if service.status else None
        if not wants_load_balancer(service) or needs_cleanup(service):
            _, exists = await self._call(
                "failed to check if load balancer exists before cleanup",
                self._balancer.get_load_balancer(self.cluster_name, service),
            )
            if exists:
                self.recorder.event(
                    service, "Normal", "DeletingLoadBalancer", "Deleting load balancer"
                )
                await self._call(
                    "failed to delete load balancer",
                    self._balancer.ensure_load_balancer_deleted(self.cluster_name, service),
                )
            await self._call(
                "failed to remove load balancer cleanup finalizer",
                self._set_finalizer(service, present=False),
            )
            self.recorder.event(service, "Normal", "DeletedLoadBalancer", "Deleted load balancer")
            await self._patch_status(service, previous, LoadBalancerStatus())
            return True
        self.recorder.event(service, "Normal", "EnsuringLoadBalancer", "Ensuring load balancer")
        await self._call(
            "failed to add load balancer cleanup finalizer",
            self._set_finalizer(service, present=True),
        )
        nodes = self._eligible_nodes()
        if not nodes:
            self.recorder.event(
                service,
                "Warning",
                "UnAvailableLoadBalancer",
                "There are no available nodes for LoadBalancer",
            )
        try:
            status = await self._balancer.ensure_load_balancer(self.cluster_name, service, nodes)
        except ImplementedElsewhere:
            logger.debug(
                "service: load balancer of %s/%s implemented elsewhere; ignored",
                service.metadata.namespace,
                service.metadata.name,
            )
            return False
        except Exception as exc:
            raise RuntimeError(f"failed to ensure load balancer: {exc}") from exc
        if status is None:
            raise RuntimeError("service status returned by EnsureLoadBalancer is nil")
        self.recorder.event(service, "Normal", "EnsuredLoadBalancer", "Ensured load balancer")
        await self._patch_status(service, previous, status)
        return False

    @staticmethod
    async def _call(what: str, call: Any) -> Any:
        try:
            return await call
        except Exception as exc:
            raise RuntimeError(f"{what}: {exc}") from exc

    async def _delete_without_finalizer(self, service: Service) -> None:
        """The balancer of a Service that went away without the finalizer."""
        if not wants_load_balancer(service):
            return
        self.recorder.event(service, "Normal", "DeletingLoadBalancer", "Deleting load balancer")
        try:
            await self._balancer.ensure_load_balancer_deleted(self.cluster_name, service)
        except Exception as exc:
            self.recorder.event(
                service,
                "Warning",
                "DeleteLoadBalancerFailed",
                f"Error deleting load balancer: {exc}",
            )
            raise
        self.recorder.event(service, "Normal", "DeletedLoadBalancer", "Deleted load balancer")

    async def _set_finalizer(self, service: Service, *, present: bool) -> None:
        """Add or remove the cleanup finalizer with a strategic-merge patch of
        ``services/status``, as the real controller (no resourceVersion precondition)."""
        if has_finalizer(service) == present:
            return
        if present:
            patch: dict[str, Any] = {"metadata": {"finalizers": [LOAD_BALANCER_CLEANUP_FINALIZER]}}
        else:
            patch = {
                "metadata": {
                    "$deleteFromPrimitiveList/finalizers": [LOAD_BALANCER_CLEANUP_FINALIZER]
                }
            }
        api = self._client.api(Service, service.metadata.namespace or "")
        await api.patch_status(service.metadata.name or "", patch, patch_type=PatchType.STRATEGIC)

    async def _patch_status(
        self, service: Service, previous: LoadBalancerStatus | None, new: LoadBalancerStatus
    ) -> None:
        if load_balancer_status_equal(previous, new):
            return
        body = {"status": {"loadBalancer": {"ingress": to_dict(new).get("ingress")}}}
        api = self._client.api(Service, service.metadata.namespace or "")
        try:
            await api.patch_status(service.metadata.name or "", body)
        except NotFound:  # gone right after the finalizer went: nothing to write to
            return
        except Exception as exc:
            raise RuntimeError(f"failed to update load balancer status: {exc}") from exc

    # -- host sync -----------------------------------------------------------------------

    def _eligible_nodes(self) -> list[Node]:
        nodes = [n for n in self._nodes.list() if node_eligible(n)]
        return sorted(nodes, key=lambda n: n.metadata.name or "")

    def trigger_node_sync(self) -> None:
        """Ask for a host sync; a full one if the eligible node set changed."""
        hosts = {n.metadata.name or "" for n in self._eligible_nodes()}
        if hosts != self._known_hosts:
            self._known_hosts = hosts
            self._full_sync = True
        self._wake.set()

    async def _node_sync_loop(self) -> None:
        await self._node_informer.wait_for_sync()
        while True:
            await self._wait_for_trigger()
            self._wake = anyio.Event()
            try:
                await self.sync_nodes()
            except Exception as exc:
                log_failed_pass(logger, "service: host sync", exc)

    async def _wait_for_trigger(self) -> None:
        if self._wake.is_set():
            return
        async with anyio.create_task_group() as tg:

            async def period() -> None:
                await self._clock.sleep(self._period)
                self.trigger_node_sync()

            async def woken() -> None:
                await self._wake.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(period)
            tg.start_soon(woken)

    async def sync_nodes(self) -> None:
        """One host sync: every cached Service after a node set change, else only those whose
        last update failed."""
        if self._full_sync:
            self._full_sync = False
            keys = sorted(self.cached)
        else:
            keys = self._to_retry
        hosts = self._eligible_nodes()
        retry: list[ObjectKey] = []
        for key in keys:
            service = self._services.get_or_none(key.namespace, key.name) or self.cached.get(key)
            if service is None or not wants_load_balancer(service):
                continue
            if not await self._update_hosts(service, hosts):
                retry.append(key)
        self._to_retry = retry
        self.node_syncs += 1

    async def _update_hosts(self, service: Service, hosts: list[Node]) -> bool:
        """UpdateLoadBalancer; False to retry on the next round."""
        try:
            await self._balancer.update_load_balancer(self.cluster_name, service, hosts)
        except ImplementedElsewhere:
            return True
        except Exception as exc:
            try:
                _, exists = await self._balancer.get_load_balancer(self.cluster_name, service)
            except Exception as check:
                logger.warning("service: checking the balancer of %s: %s", _key(service), check)
                exists = True
            if not exists:
                return True
            names = sorted(n.metadata.name or "" for n in hosts)
            self.recorder.event(
                service,
                "Warning",
                "UpdateLoadBalancerFailed",
                f"Error updating load balancer with new hosts {names}: {exc}",
            )
            return False
        if hosts:
            self.recorder.event(
                service, "Normal", "UpdatedLoadBalancer", "Updated load balancer with new hosts"
            )
        else:
            self.recorder.event(
                service,
                "Warning",
                "UnAvailableLoadBalancer",
                "There are no available nodes for LoadBalancer",
            )
        return True
