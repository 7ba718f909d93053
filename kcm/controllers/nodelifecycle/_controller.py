"""The node lifecycle controller: node health, condition taints, NoExecute tainting by zone (§12).

Every ``node_monitor_period`` one pass over the node cache (kube-controller-manager's
``monitorNodeHealth``):

1. nodes seen for the first time get a ``RegisteredNode`` event and their zone a tainting
   queue; vanished ones a ``RemovingNode`` event;
2. each node's health is judged from its Ready heartbeat and its Lease (:func:`assess`); a
   node silent for longer than the grace period gets Ready, MemoryPressure, DiskPressure and
   PIDPressure set to Unknown ("Kubelet stopped posting node status.");
3. the Ready condition seen *before* this pass decides the NoExecute taint: False queues
   ``not-ready``, Unknown ``unreachable`` (swapped at once if the other one is there), True
   removes both;
4. a node that this pass turned from Ready to not Ready gets a ``NodeNotReady`` event and the
   pods on it that have a Ready condition get it set to False;
5. each zone's state (Normal, PartialDisruption, FullDisruption) sets the rate its queue taints
   nodes at; when every zone is fully disrupted tainting stops and NoExecute taints are
   removed (the control plane is more likely cut off than every node dead).

Queued nodes are tainted by a pass every ``tainting_period`` (100 ms) that takes one token of
the zone's bucket per node. Node events drive the NoSchedule condition taints
(``not-ready``, ``unreachable``, ``memory-pressure``, ``disk-pressure``, ``pid-pressure``,
``network-unavailable``, ``unschedulable``) and the beta ``os``/``arch`` labels; pods bound to
a node that is not Ready are marked not Ready. :class:`NoExecuteTaintManager` evicts.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry, Counter

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import log_failed_pass, run_every
from kcm.errors import ApiError, KcmError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import (
    Lease,
    Node,
    NodeCondition,
    NodeSpec,
    ObjectKey,
    Pod,
    PodStatus,
    Taint,
    object_key,
)
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result

from ._health import HealthAssessment, NodeHealth, assess, ready_condition
from ._pods_by_node import ensure_node_index, pods_on_node
from ._rate_limited_queue import RateLimitedTimedQueue
from ._taint_manager import NoExecuteTaintManager
from ._taints import (
    NOT_READY_NO_EXECUTE,
    UNREACHABLE_NO_EXECUTE,
    condition_taint_diff,
    has_taint,
    label_updates,
    swap_taints,
)
from ._zones import (
    ZoneState,
    compute_zone_state,
    excluded_from_disruption,
    zone_key,
    zone_rate,
)

__all__ = ["NODE_LEASE_NAMESPACE", "NodeLifecycleController"]

logger = logging.getLogger(__name__)

NODE_LEASE_NAMESPACE = "kube-node-lease"
_UPDATE_RETRIES = 5  # kube's NodeHealthUpdateRetry / NodeStatusUpdateRetry


def _name(node: Node) -> str:
    return node.metadata.name or ""


class _NodeUpdates:
    """Every node add and update: re-check its condition taints and labels."""

    def create_keys(self, obj: Node, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: Node, new: Node) -> Iterable[ObjectKey]:
        return (object_key(new),)

    def delete_keys(self, obj: Node, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


class _PodBindings:
    """Pods newly bound to a node (added with, or updated to, another ``nodeName``)."""

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if obj.spec and obj.spec.node_name else ()

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        node = new.spec.node_name if new.spec else None
        if node and node != (old.spec.node_name if old.spec else None):
            return (object_key(new),)
        return ()

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


class _Callback:
    """Adapts a bound method to the runtime's reconciler protocol."""

    def __init__(self, fn: Callable[[ObjectKey], Awaitable[Result]]) -> None:
        self._fn = fn

    async def reconcile(self, key: ObjectKey) -> Result:
        return await self._fn(key)


class NodeLifecycleController:
    """Watches node health, taints unhealthy nodes and has the taint manager evict their pods.

    Args:
        client: the API client.
        factory: the shared informer factory (Nodes, Pods, Leases in ``kube-node-lease``).
        recorder: events (``RegisteredNode``, ``RemovingNode``, ``NodeNotReady``); kube's
            source is ``node-controller``.
        taint_recorder: the taint manager's ``TaintManagerEviction`` events (kube's source
            is ``taint-controller``); default ``recorder``.
        clock: every period and grace on it.
        workers: accepted for the common signature (kube runs 8 taint workers; so does this).
        registry: Prometheus registry.
        node_monitor_period: ``--node-monitor-period`` (5 s).
        node_monitor_grace_period: ``--node-monitor-grace-period`` (40 s).
        node_startup_grace_period: ``--node-startup-grace-period`` (60 s).
        node_eviction_rate: ``--node-eviction-rate`` (0.1 nodes/s per zone).
        secondary_node_eviction_rate: ``--secondary-node-eviction-rate`` (0.01).
        unhealthy_zone_threshold: ``--unhealthy-zone-threshold`` (0.55).
        large_cluster_size_threshold: ``--large-cluster-size-threshold`` (50).
        tainting_period: seconds between NoExecute tainting passes (kube: 100 ms).

    Raises:
        ValueError: a period is not positive, a rate negative, or the threshold outside
            (0, 1].

    Attributes:
        passes: completed health passes (tests wait on it).
        last_pass_at: the clock's monotonic time the last completed pass started at.
        taint_manager: the :class:`NoExecuteTaintManager`.
        zone_states: each zone's state after the last pass.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        taint_recorder: EventRecorder | None = None,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        node_monitor_period: float = 5.0,
        node_monitor_grace_period: float = 40.0,
        node_startup_grace_period: float = 60.0,
        node_eviction_rate: float = 0.1,
        secondary_node_eviction_rate: float = 0.01,
        unhealthy_zone_threshold: float = 0.55,
        large_cluster_size_threshold: int = 50,
        tainting_period: float = 0.1,
    ) -> None:
        for label, value in (
            ("node_monitor_period", node_monitor_period),
            ("node_monitor_grace_period", node_monitor_grace_period),
            ("node_startup_grace_period", node_startup_grace_period),
            ("tainting_period", tainting_period),
        ):
            if not value > 0:
                raise ValueError(f"{label} must be positive, got {value}")
        for label, value in (
            ("node_eviction_rate", node_eviction_rate),
            ("secondary_node_eviction_rate", secondary_node_eviction_rate),
        ):
            if not value >= 0:
                raise ValueError(f"{label} must not be negative, got {value}")
        if not 0 < unhealthy_zone_threshold <= 1:
            raise ValueError(
                f"unhealthy_zone_threshold must be in (0, 1], got {unhealthy_zone_threshold}"
            )
        if large_cluster_size_threshold < 0:
            raise ValueError("large_cluster_size_threshold must not be negative")
        self._client = client
        self._nodes_api = client.api(Node)
        self._recorder = recorder
        self._clock = clock
        self.workers = workers
        self.monitor_period = node_monitor_period
        self.monitor_grace = node_monitor_grace_period
        self.startup_grace = node_startup_grace_period
        self.eviction_rate = node_eviction_rate
        self.secondary_eviction_rate = secondary_node_eviction_rate
        self.unhealthy_threshold = unhealthy_zone_threshold
        self.large_cluster_threshold = large_cluster_size_threshold
        self._tainting_period = tainting_period
        node_informer = factory.informer_for(Node)
        pod_informer = factory.informer_for(Pod)
        ensure_node_index(pod_informer)
        self._lease_informer = factory.informer_for(Lease, namespace=NODE_LEASE_NAMESPACE)
        self.nodes = node_informer.lister()
        self.pods = pod_informer.lister()
        self.leases = self._lease_informer.lister()
        self.taint_manager = NoExecuteTaintManager(
            client,
            factory,
            recorder=taint_recorder if taint_recorder is not None else recorder,
            clock=clock,
            registry=registry,
        )
        self._node_controller: Controller[ObjectKey] = Controller(
            "node_lifecycle_controller",  # Go's work queue name
            _Callback(self._sync_node),
            clock=clock,
            metrics=registry,
        )
        self._node_controller.watch(node_informer, _NodeUpdates(), kind="Node")
        self._pod_controller: Controller[ObjectKey] = Controller(
            "node_lifecycle_controller_pods",  # Go's work queue name
            _Callback(self._sync_pod),
            max_concurrent_reconciles=4,
            clock=clock,
            metrics=registry,
        )
        self._pod_controller.watch(pod_informer, _PodBindings(), kind="Pod")
        self.health: dict[str, NodeHealth] = {}
        self._known: dict[str, Node] = {}
        self.zone_states: dict[str, ZoneState] = {}
        self.tainters: dict[str, RateLimitedTimedQueue] = {}
        self._retry: set[str] = set()
        self._wake: anyio.Event | None = None
        self.passes = 0
        self.last_pass_at = -float("inf")
        self._evictions: Counter | None = None
        if registry is not None:
            self._evictions = Counter(
                "node_collector_evictions",
                "Nodes tainted NoExecute by the node lifecycle controller, by zone",
                ["zone"],
                registry=registry,
            )

    def __repr__(self) -> str:
        return f"<NodeLifecycleController nodes={len(self._known)} passes={self.passes}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start the taint manager and event-driven parts, wait for the Lease cache, then run
        the health and tainting passes until cancelled."""
        async with anyio.create_task_group() as tg:
            await tg.start(self.taint_manager.run)
            await tg.start(self._node_controller.run)
            await tg.start(self._pod_controller.run)
            await self._lease_informer.wait_for_sync()
            tg.start_soon(self._monitor_loop)
            tg.start_soon(self._tainting_loop)
            task_status.started()

    # -- loops -------------------------------------------------------------------------------

    async def _monitor_loop(self) -> None:
        await run_every(
            self._clock,
            self.monitor_period,
            self.monitor_node_health,
            on_failure=lambda exc: log_failed_pass(logger, "nodelifecycle: health pass", exc),
        )

    async def _tainting_loop(self) -> None:
        while True:
            try:
                await self.tainting_pass()
            except Exception as exc:
                log_failed_pass(logger, "nodelifecycle: tainting pass", exc)
            waits = [
                q.limiter.seconds_to_token()
                for q in self.tainters.values()
                if len(q) and q.limiter.qps > 0
            ]
            if waits:
                await self._clock.sleep(max(self._tainting_period, min(waits)))
            else:
                self._wake = anyio.Event()
                await self._wake.wait()
                self._wake = None

    # -- the health pass ---------------------------------------------------------------------

    async def monitor_node_health(self) -> None:
        """One health pass over every cached node (see the module docstring)."""
        started = self._clock.monotonic()
        nodes = sorted(self.nodes.list(), key=_name)
        names = {_name(n) for n in nodes}
        for node in nodes:
            if zone_key(node) not in self.zone_states:
                self._add_zone(zone_key(node))
        for node in nodes:
            if _name(node) in self._known:
                continue
            logger.info("nodelifecycle: observed a new node %s", _name(node))
            self._recorder.event(
                node, "Normal", "RegisteredNode", f"Registered Node {_name(node)} in Controller"
            )
            self._known[_name(node)] = node
            await self._mark_reachable(node)
        for name in sorted(set(self._known) - names):
            gone = self._known.pop(name)
            self._recorder.event(
                gone, "Normal", "RemovingNode", f"Removing Node {name} from Controller"
            )
        zone_conditions: dict[str, list[NodeCondition | None]] = {}
        for cached in nodes:
            try:
                node, result = await self._update_health(cached)
            except (ApiError, KcmError) as exc:
                logger.error(
                    "Update health of Node %r from Controller error: %s. Skipping - no pods "
                    "will be evicted.",
                    _name(cached),
                    exc,
                )
                continue
            if not excluded_from_disruption(node):
                zone_conditions.setdefault(zone_key(node), []).append(result.current_ready)
            current, observed = result.current_ready, result.observed_ready
            if current is not None:
                pods = pods_on_node(self.pods, _name(node))
                await self._process_taint_based_eviction(node, observed)
                went_down = current.status != "True" and observed.status == "True"
                if went_down:
                    self._recorder.event(
                        node,
                        "Normal",
                        "NodeNotReady",
                        f"Node {_name(node)} status is now: NodeNotReady",
                    )
                if went_down or (_name(node) in self._retry and current.status != "True"):
                    try:
                        await self.mark_pods_not_ready(pods, _name(node))
                    except (ApiError, KcmError) as exc:
                        logger.warning(
                            "unable to mark all pods NotReady on node %s: %s; queuing for retry",
                            _name(node),
                            exc,
                        )
                        self._retry.add(_name(node))
                        continue
            self._retry.discard(_name(node))
        await self._handle_disruption(zone_conditions, nodes)
        self.passes += 1
        self.last_pass_at = started

    async def _update_health(self, node: Node) -> tuple[Node, HealthAssessment]:
        """Judge the node's health and write Unknown conditions if it went silent (re-read
        and retried on failure, as kube's PollImmediate)."""
        for attempt in range(_UPDATE_RETRIES):
            lease = self.leases.get_or_none(NODE_LEASE_NAMESPACE, _name(node))
            renew = lease.spec.renew_time if lease is not None and lease.spec else None
            now = self._clock.now()
            result = assess(
                node,
                self.health.get(_name(node)),
                renew,
                now,
                monitor_grace_period=self.monitor_grace,
                startup_grace_period=self.startup_grace,
            )
            self.health[_name(node)] = result.health
            if result.new_status is None:
                return node, result
            try:
                updated = msgspec.structs.replace(node, status=result.new_status)
                await self._nodes_api.update(node, updated, subresource="status")
            except (ApiError, KcmError):
                if attempt == _UPDATE_RETRIES - 1:
                    raise
                node = await self._nodes_api.get(_name(node))
                continue
            logger.info("node %s stopped posting status: conditions set to Unknown", _name(node))
            self.health[_name(node)] = result.after_write(now)
            return updated, result
        raise AssertionError("unreachable")  # pragma: no cover

    async def _process_taint_based_eviction(self, node: Node, observed: NodeCondition) -> None:
        if observed.status == "False":
            if has_taint(node, UNREACHABLE_NO_EXECUTE):
                if not await self._swap(node, [NOT_READY_NO_EXECUTE], [UNREACHABLE_NO_EXECUTE]):
                    logger.error(
                        "failed to swap UnreachableTaint to NotReadyTaint on %s", _name(node)
                    )
            else:
                self._mark_for_tainting(node, NOT_READY_NO_EXECUTE)
        elif observed.status == "Unknown":
            if has_taint(node, NOT_READY_NO_EXECUTE):
                if not await self._swap(node, [UNREACHABLE_NO_EXECUTE], [NOT_READY_NO_EXECUTE]):
                    logger.error(
                        "failed to swap NotReadyTaint to UnreachableTaint on %s", _name(node)
                    )
            else:
                self._mark_for_tainting(node, UNREACHABLE_NO_EXECUTE)
        elif observed.status == "True":
            await self._mark_reachable(node)

    def _poke(self) -> None:
        """Wake the tainting loop (something was queued or a rate changed)."""
        if self._wake is not None:
            self._wake.set()

    def _add_zone(self, zone: str) -> None:
        self.zone_states[zone] = ZoneState.INITIAL
        if zone not in self.tainters:
            self.tainters[zone] = RateLimitedTimedQueue(self.eviction_rate, self._clock)

    def _mark_for_tainting(self, node: Node, taint: Taint) -> None:
        tainter = self.tainters[zone_key(node)]
        if not has_taint(node, taint):
            tainter.remove(_name(node))
        if tainter.add(_name(node), node.metadata.uid or ""):
            logger.info(
                "node %s is %s: queued for the %s taint", _name(node), taint.key, taint.effect
            )
            self._poke()

    async def _mark_reachable(self, node: Node) -> None:
        """Remove both NoExecute taints and forget any queued tainting."""
        tainted = has_taint(node, NOT_READY_NO_EXECUTE) or has_taint(node, UNREACHABLE_NO_EXECUTE)
        both = [NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE]
        if tainted and not await self._swap(node, [], both):
            return
        tainter = self.tainters.get(zone_key(node))
        if tainter is not None:
            tainter.remove(_name(node))

    # -- zones -------------------------------------------------------------------------------

    def _set_zone_rate(self, zone: str, size: int, state: ZoneState) -> None:
        rate = zone_rate(
            state,
            size,
            eviction_rate=self.eviction_rate,
            secondary_eviction_rate=self.secondary_eviction_rate,
            large_cluster_threshold=self.large_cluster_threshold,
        )
        self.tainters[zone].swap_limiter(rate)
        self._poke()

    async def _handle_disruption(
        self, zone_conditions: dict[str, list[NodeCondition | None]], nodes: Sequence[Node]
    ) -> None:
        new_states: dict[str, ZoneState] = {}
        all_down = True
        for zone, conditions in zone_conditions.items():
            _, state = compute_zone_state(conditions, self.unhealthy_threshold)
            if state is not ZoneState.FULL_DISRUPTION:
                all_down = False
            new_states[zone] = state
            self.zone_states.setdefault(zone, ZoneState.INITIAL)
        for zone in [z for z in self.zone_states if z not in zone_conditions]:
            del self.zone_states[zone]
        all_were_down = all(s is ZoneState.FULL_DISRUPTION for s in self.zone_states.values())
        if all_down and all_were_down:
            return
        if all_down:
            logger.info(
                "Controller detected that all Nodes are not-Ready. Entering master disruption mode."
            )
            for node in nodes:
                await self._mark_reachable(node)
            for zone in self.zone_states:
                self.tainters[zone].swap_limiter(0.0)
                self.zone_states[zone] = ZoneState.FULL_DISRUPTION
            return
        if all_were_down:
            logger.info(
                "Controller detected that some Nodes are Ready. Exiting master disruption mode."
            )
            now = self._clock.now()
            for name, health in list(self.health.items()):
                if name in {_name(n) for n in nodes}:
                    self.health[name] = replace(
                        health, probe_timestamp=now, ready_transition_timestamp=now
                    )
            for zone in self.zone_states:
                self._set_zone_rate(zone, len(zone_conditions[zone]), new_states[zone])
                self.zone_states[zone] = new_states[zone]
            return
        for zone, state in list(self.zone_states.items()):
            if state is new_states[zone]:
                continue
            logger.info(
                "Controller detected that zone %r is now in state %s.", zone, new_states[zone].value
            )
            self._set_zone_rate(zone, len(zone_conditions[zone]), new_states[zone])
            self.zone_states[zone] = new_states[zone]

    # -- NoExecute tainting ------------------------------------------------------------------

    async def tainting_pass(self) -> None:
        """Taint queued nodes NoExecute, one token of their zone's rate each."""
        for zone in sorted(self.tainters):
            await self.tainters[zone].try_process(self._taint_one)

    async def _taint_one(self, name: str, uid: str) -> tuple[bool, float]:
        node = self.nodes.get_or_none(None, name)
        if node is None:
            return True, 0.0
        ready = ready_condition(node.status)
        if ready is None:
            return False, 0.05
        if ready.status == "False":
            add, remove = NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE
        elif ready.status == "Unknown":
            add, remove = UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE
        else:
            logger.info(
                "Node %s was in a taint queue, but it's ready now. Ignoring taint request.", name
            )
            return True, 0.0
        done = await self._swap(node, [add], [remove])
        if done and self._evictions is not None:
            self._evictions.labels(zone=zone_key(node)).inc()
        return done, 0.0

    async def _swap(self, node: Node, add: list[Taint], remove: list[Taint]) -> bool:
        """Add and remove taints (by key and effect) on the node; False if that failed."""
        current = node
        for attempt in range(_UPDATE_RETRIES):
            spec = current.spec or NodeSpec()
            taints = swap_taints(spec.taints or (), add, remove, self._clock.now())
            if taints is None:
                return True
            try:
                await self._nodes_api.update(
                    current,
                    msgspec.structs.replace(
                        current, spec=msgspec.structs.replace(spec, taints=taints or None)
                    ),
                )
                return True
            except NotFound:
                return False
            except (ApiError, KcmError) as exc:
                if attempt == _UPDATE_RETRIES - 1:
                    logger.warning("could not update the taints of node %s: %s", _name(node), exc)
                    return False
                try:
                    current = await self._nodes_api.get(_name(node))
                except (ApiError, KcmError):
                    return False
        return False

    # -- event-driven parts ------------------------------------------------------------------

    async def _sync_node(self, key: ObjectKey) -> Result:
        """NoSchedule condition taints and mirrored labels of one node."""
        node = self.nodes.get_or_none(None, key.name)
        if node is None:
            return Result()
        add, remove = condition_taint_diff(node)
        if (add or remove) and not await self._swap(node, add, remove):
            raise KcmError(f"failed to swap the condition taints of node {key.name}")
        labels = label_updates(node)
        if labels:
            fresh = self.nodes.get_or_none(None, key.name) or node
            merged = {**(fresh.metadata.labels or {}), **labels}
            try:
                await self._nodes_api.update(
                    fresh,
                    msgspec.structs.replace(
                        fresh, metadata=msgspec.structs.replace(fresh.metadata, labels=merged)
                    ),
                )
            except NotFound:
                pass
        return Result()

    async def _sync_pod(self, key: ObjectKey) -> Result:
        """Mark a pod just bound to a node that is not Ready as not Ready."""
        pod = self.pods.namespace(key.namespace).get_or_none(key.name)
        if pod is None or pod.spec is None or not pod.spec.node_name:
            return Result()
        health = self.health.get(pod.spec.node_name)
        if health is None or self.nodes.get_or_none(None, pod.spec.node_name) is None:
            return Result()
        ready = ready_condition(health.status)
        if ready is not None and ready.status != "True":
            await self.mark_pods_not_ready([pod], pod.spec.node_name)
        return Result()

    async def mark_pods_not_ready(self, pods: Iterable[Pod], node_name: str) -> None:
        """Set the Ready condition of these pods (those that have one) to False, with a
        ``NodeNotReady`` event each (kube's ``MarkPodsNotReady``).

        Raises:
            KcmError: some status writes failed (the others went through).
        """
        failures: list[Exception] = []
        now = self._clock.now().replace(microsecond=0)
        for pod in pods:
            if pod.spec is None or pod.spec.node_name != node_name or pod.status is None:
                continue
            conditions = list(pod.status.conditions or ())
            index = next((i for i, c in enumerate(conditions) if c.type == "Ready"), None)
            if index is None or conditions[index].status == "False":
                continue
            conditions[index] = msgspec.structs.replace(
                conditions[index], status="False", last_transition_time=now
            )
            status: PodStatus = msgspec.structs.replace(pod.status, conditions=conditions)
            api = self._client.api(Pod, namespace=pod.metadata.namespace)
            try:
                await api.update(
                    pod, msgspec.structs.replace(pod, status=status), subresource="status"
                )
            except NotFound:
                continue
            except (ApiError, KcmError) as exc:
                failures.append(exc)
                continue
            self._recorder.event(pod, "Warning", "NodeNotReady", "Node is not ready")
        if failures:
            raise KcmError(
                f"could not mark {len(failures)} pod(s) on node {node_name} not ready: "
                f"{failures[0]}"
            )
