"""A small scheduler: bind pending pods to simulated nodes through ``pods/binding``.

Filters as kube-scheduler's basic plugins do (:mod:`._filters`): node Ready, not cordoned
unless the pod tolerates it, NoSchedule/NoExecute taints tolerated, ``nodeSelector`` and
required node affinity matched (so a DaemonSet's pod lands on the node it is pinned to), pod
count, CPU and memory requests within allocatable, required pod anti-affinity (either
way, per topology domain), and the pod's PersistentVolumeClaims (:mod:`._volume_binding`: an
unbound Immediate claim keeps the pod Pending; a WaitForFirstConsumer claim is given the chosen
node, and the pod is bound once its claims are). It picks the node with the fewest pods, so
replicas spread. Only pods for ``default-scheduler`` are taken and only simulated nodes are
used. A pod that fits nowhere gets ``PodScheduled=False`` with reason ``Unschedulable`` and is
retried when nodes change (labelled, tainted, cordoned, added), pods go away, or after a
while.

Binds issued but not yet seen in the informer are *assumed* (as kube-scheduler does): they
count against their node, for capacity and anti-affinity, so concurrent workers never
overfill one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import POD_PVC_INDEX, add_pod_pvc_index
from kcm.errors import Conflict, NotFound
from kcm.informers import Lister, SharedIndexInformer, SharedInformerFactory
from kcm.models import (
    Binding,
    Node,
    ObjectKey,
    ObjectMeta,
    ObjectReference,
    Pod,
    PodCondition,
    encode,
    object_key,
    parse_quantity,
)
from kcm.models.core_v1 import PersistentVolume, PersistentVolumeClaim
from kcm.models.storage_v1 import StorageClass
from kcm.runtime import Controller, Request, Result, enqueue_mapped, enqueue_object, predicate

from ._config import SIMULATED_LABEL, SimulationConfig
from ._filters import (
    anti_affinity_reason,
    node_affinity_reason,
    taint_reason,
    unschedulable_reason,
)
from ._resources import TERMINAL_PHASES, node_is_ready, pod_requests
from ._volume_binding import VolumeBinder

__all__ = [
    "NODE_NAME_INDEX",
    "EventRecorder",
    "Scheduler",
    "ensure_node_name_index",
    "pods_on",
]

logger = logging.getLogger(__name__)

NODE_NAME_INDEX = "kcm.simulation/spec.nodeName"
"""Pod informer index by ``spec.nodeName`` (``""`` for unscheduled pods)."""

SCHEDULER_NAME = "default-scheduler"
UNSCHEDULABLE_RETRY = 5.0


class EventRecorder(Protocol):
    """What the simulation needs of an event recorder (``kcm.record.EventRecorder``)."""

    def event(self, obj: Any, type: str, reason: str, message: str) -> None: ...


def _node_name_of(pod: Pod) -> list[str]:
    return [(pod.spec.node_name if pod.spec else None) or ""]


def pods_on(pods: Lister[Pod], node: str) -> list[ObjectKey]:
    """The keys of the cached pods bound to ``node`` (``""``: not bound yet)."""
    return [object_key(p) for p in pods.by_index(NODE_NAME_INDEX, node)]


def ensure_node_name_index(informer: SharedIndexInformer[Pod]) -> None:
    """Add :data:`NODE_NAME_INDEX` to the shared pod informer unless it is there."""
    try:
        informer.add_indexers({NODE_NAME_INDEX: _node_name_of})
    except ValueError:
        pass  # another simulation component (sharing the factory) added it


@dataclass(frozen=True)
class _Assumed:
    node: str
    cpu: Decimal
    memory: Decimal
    pod: Pod


def _wants_scheduling(pod: Pod) -> bool:
    spec = pod.spec
    if spec is None or spec.node_name or pod.metadata.deletion_timestamp is not None:
        return False
    if (pod.status.phase if pod.status else None) in TERMINAL_PHASES:
        return False
    if spec.scheduling_gates:
        return False
    return (spec.scheduler_name or SCHEDULER_NAME) == SCHEDULER_NAME


def _over_capacity(node: Node, pods: int, cpu: Decimal, memory: Decimal) -> str | None:
    """Why ``pods`` pods requesting ``cpu`` and ``memory`` in all do not fit ``node``."""
    allocatable = (node.status.allocatable if node.status else None) or {}
    if pods > int(parse_quantity(allocatable.get("pods", "110"))):
        return "Too many pods"
    if cpu > parse_quantity(allocatable.get("cpu", "0")):
        return "Insufficient cpu"
    if memory > parse_quantity(allocatable.get("memory", "0")):
        return "Insufficient memory"
    return None


class Scheduler:
    """Binds pods to simulated nodes (a Runnable; one runtime controller ``sim-scheduler``).

    Args:
        client: the API client (binds and status writes).
        factory: the shared informer factory (pods and nodes; run it alongside).
        config: the simulation settings (``scheduler_workers``).
        clock: retry timing.
        registry: Prometheus registry for the controller's metrics.
        recorder: receives ``Scheduled`` / ``FailedScheduling`` events, if given.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        config: SimulationConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
        registry: CollectorRegistry | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self._client = client
        self._config = config if config is not None else SimulationConfig()
        self._recorder = recorder
        self._clock = clock
        self._assumed: dict[ObjectKey, _Assumed] = {}
        pods = factory.informer_for(Pod)
        ensure_node_name_index(pods)
        add_pod_pvc_index(pods)
        nodes = factory.informer_for(Node)
        claims = factory.informer_for(PersistentVolumeClaim)
        volumes = factory.informer_for(PersistentVolume)
        classes = factory.informer_for(StorageClass)
        self._pods = pods.lister()
        self._nodes = nodes.lister()
        self._volume_binder = VolumeBinder(
            client, claims.lister(), volumes.lister(), classes.lister()
        )
        self.controller: Controller[ObjectKey] = Controller(
            "sim-scheduler",
            self,
            max_concurrent_reconciles=self._config.scheduler_workers,
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(pods, enqueue_object(), predicates=[predicate(self._interesting)])
        # Capacity freed (a bound pod finished or is going away): look at pending pods again.
        self.controller.watch(pods, enqueue_mapped(self._pending_if_freed))
        self.controller.watch(nodes, enqueue_mapped(lambda _node: self._pending()))
        # A claim bound, annotated or created: the pending pods that use it.
        self.controller.watch(claims, enqueue_mapped(self._pending_users))
        self._listers = [volumes.add_event_handler(), classes.add_event_handler()]
        self.controller.wait_for(self._listers, kind="PersistentVolume and StorageClass")

    def _pending_users(self, claim: PersistentVolumeClaim) -> Iterable[ObjectKey]:
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        return [
            object_key(p)
            for p in self._pods.by_index(POD_PVC_INDEX, key)
            if not (p.spec and p.spec.node_name)
        ]

    def _interesting(self, pod: Pod) -> bool:
        return _wants_scheduling(pod) or object_key(pod) in self._assumed

    def _pending(self) -> Iterable[ObjectKey]:
        return pods_on(self._pods, "")

    def _pending_if_freed(self, pod: Pod) -> Iterable[ObjectKey]:
        bound = bool(pod.spec and pod.spec.node_name)
        finished = (pod.status.phase if pod.status else None) in TERMINAL_PHASES
        if bound and (finished or pod.metadata.deletion_timestamp is not None):
            return self._pending()
        return ()

    # -- node choice -------------------------------------------------------------------------

    def _usage(self, node: str) -> tuple[int, Decimal, Decimal]:
        count, cpu, memory = 0, Decimal(0), Decimal(0)
        for pod in self._pods.by_index(NODE_NAME_INDEX, node):
            if (pod.status.phase if pod.status else None) in TERMINAL_PHASES:
                continue
            key = object_key(pod)
            if key in self._assumed:
                continue  # counted below
            c, m = pod_requests(pod)
            count, cpu, memory = count + 1, cpu + c, memory + m
        for assumed in self._assumed.values():
            if assumed.node == node:
                count, cpu, memory = count + 1, cpu + assumed.cpu, memory + assumed.memory
        return count, cpu, memory

    def _why_not(self, pod: Pod, node: Node) -> str | None:
        """Why ``pod`` cannot go to ``node`` regardless of what already runs there."""
        labels = node.metadata.labels or {}
        if labels.get(SIMULATED_LABEL) != "true":
            return "not simulated"
        if node.metadata.deletion_timestamp is not None or not node_is_ready(node):
            return "node(s) were not ready"
        return (
            unschedulable_reason(pod, node)
            or taint_reason(pod, node)
            or node_affinity_reason(pod, node)
            or self._volume_binder.filter(pod, node)
        )

    def _pods_on(self, node: str) -> list[Pod]:
        """The live pods bound, or assumed to be bound, to ``node``."""
        bound = [
            p
            for p in self._pods.by_index(NODE_NAME_INDEX, node)
            if (p.status.phase if p.status else None) not in TERMINAL_PHASES
            and object_key(p) not in self._assumed
        ]
        return bound + [a.pod for a in self._assumed.values() if a.node == node]

    def pick_node(self, pod: Pod) -> tuple[str | None, str]:
        """The node to bind ``pod`` to (fewest pods first, then name), or None and
        kube-scheduler's style of reason (``0/3 nodes are available: 3 Insufficient cpu.``)."""
        cpu, memory = pod_requests(pod)
        candidates: list[tuple[int, str]] = []
        reasons: dict[str, int] = {}
        nodes = self._nodes.list()
        blocked = self._volume_binder.pre_filter(pod)
        if blocked is not None:
            return None, f"0/{len(nodes)} nodes are available: {blocked}."
        for node in nodes:
            name = node.metadata.name or ""
            reason = self._why_not(pod, node)
            count = 0
            if reason is None:
                count, used_cpu, used_memory = self._usage(name)
                reason = _over_capacity(node, count + 1, used_cpu + cpu, used_memory + memory)
            if reason is None:
                reason = anti_affinity_reason(pod, node, nodes, self._pods_on)
                if reason is None:
                    candidates.append((count, name))
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + 1
        if candidates:
            return min(candidates)[1], ""
        detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        return None, f"0/{len(nodes)} nodes are available{': ' + detail if detail else ''}."

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, request: Request) -> Result:
        """Bind the pod if it is pending and something fits; see the module docstring."""
        pod = self._pods.get_or_none(request.namespace, request.name)
        if pod is None or not _wants_scheduling(pod):
            self._assumed.pop(request, None)
            return Result()
        if request in self._assumed:
            return Result()  # bound; the informer has not shown it yet
        node, reason = self.pick_node(pod)
        if node is None:
            await self._mark_unschedulable(pod, reason)
            return Result(requeue_after=UNSCHEDULABLE_RETRY)
        chosen = self._nodes.get_or_none(None, node)
        if chosen is None or not await self._volume_binder.bind_claims(pod, chosen):
            return Result(requeue_after=UNSCHEDULABLE_RETRY)  # claims being bound or provisioned
        cpu, memory = pod_requests(pod)
        self._assumed[request] = _Assumed(node, cpu, memory, pod)  # before any await
        binding = Binding(
            metadata=ObjectMeta(name=request.name, uid=pod.metadata.uid),
            target=ObjectReference(api_version="v1", kind="Node", name=node),
        )
        try:
            await self._client.request(
                "POST",
                f"/api/v1/namespaces/{request.namespace}/pods/{request.name}/binding",
                content=encode(binding),
                headers={"Content-Type": "application/json"},
            )
        except (NotFound, Conflict):
            self._assumed.pop(request, None)  # gone, or bound by someone else
            return Result()
        except BaseException:
            self._assumed.pop(request, None)
            raise
        if self._recorder is not None:
            self._recorder.event(
                pod, "Normal", "Scheduled", f"Successfully assigned {request} to {node}"
            )
        return Result()

    async def _mark_unschedulable(self, pod: Pod, reason: str) -> None:
        conditions = list((pod.status.conditions if pod.status else None) or [])
        current = next((c for c in conditions if c.type == "PodScheduled"), None)
        if current and current.status == "False" and current.message == reason:
            return
        if self._recorder is not None:
            self._recorder.event(pod, "Warning", "FailedScheduling", reason)
        scheduled = PodCondition(
            type="PodScheduled",
            status="False",
            reason="Unschedulable",
            message=reason,
            last_transition_time=self._clock.now().replace(microsecond=0),
        )
        conditions = [c for c in conditions if c.type != "PodScheduled"] + [scheduled]
        status = pod.status
        assert status is not None
        api = self._client.api(Pod, namespace=pod.metadata.namespace)
        new = msgspec.structs.replace(
            pod, status=msgspec.structs.replace(status, conditions=conditions)
        )
        try:
            await api.update(pod, new, subresource="status")
        except NotFound:
            pass

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the ``sim-scheduler`` controller (needs the informer factory running)."""
        try:
            await self.controller.run(task_status=task_status)
        finally:
            for registration in self._listers:
                registration.remove()
