"""PodGC: deletes pods nobody else will (kube-controller-manager's ``podgc``).

One pass every ``gc_period`` seconds (kube: 20 s) over the pod and node caches:

1. terminated pods (phase not Pending/Running/Unknown) above ``terminated_pod_threshold``,
   evicted first, then oldest ``creationTimestamp``, then name;
2. terminating pods on a not-ready node tainted ``node.kubernetes.io/out-of-service``;
3. pods bound to a node that is gone: the node name is quarantined for ``quarantine`` seconds
   (kube: 40 s), then a live GET must say NotFound; those pods get a ``DisruptionTarget``
   condition (``DeletionByPodGC``);
4. terminating pods that were never scheduled.

Every deletion is kube's ``markFailedAndDeletePod``: a pod not yet Succeeded/Failed is first
patched to phase Failed (with the condition, if any) through ``/status``, then deleted with
grace period 0 and a uid precondition.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry, Counter

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import log_failed_pass
from kcm.errors import ApiError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import format_time, to_dict
from kcm.models.core_v1 import Node, Pod
from kcm.record import EventRecorder

__all__ = ["DEFAULT_TERMINATED_POD_THRESHOLD", "OUT_OF_SERVICE_TAINT", "PodGCController"]

logger = logging.getLogger(__name__)

OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
DEFAULT_TERMINATED_POD_THRESHOLD = 12500
"""``--terminated-pod-gc-threshold``'s default."""
_TERMINAL = ("Succeeded", "Failed")
_NOT_TERMINATED = ("Pending", "Running", "Unknown")
_DELETE_CONCURRENCY = 32
_EPOCH = datetime.min


def _terminated(pod: Pod) -> bool:
    return (pod.status.phase if pod.status else None) not in _NOT_TERMINATED


def _terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None


def _node_name(pod: Pod) -> str:
    return (pod.spec.node_name if pod.spec else None) or ""


def _eviction_order(pod: Pod) -> tuple[bool, datetime, str]:
    evicted = (pod.status.reason if pod.status else None) == "Evicted"
    created = pod.metadata.creation_timestamp
    return (
        not evicted,
        created.replace(tzinfo=None) if created else _EPOCH,
        pod.metadata.name or "",
    )


def _node_ready(node: Node) -> bool:
    for c in (node.status.conditions if node.status else None) or ():
        if c.type == "Ready":
            return c.status == "True"
    return False


def _out_of_service(node: Node) -> bool:
    return any(
        t.key == OUT_OF_SERVICE_TAINT for t in (node.spec.taints if node.spec else None) or ()
    )


@final
class PodGCController:
    """Deletes terminated pods above a threshold and pods whose node is gone.

    Args:
        client: the API client (live node checks, pod status patches and deletes).
        factory: the shared informer factory (Pod and Node informers).
        recorder: event sink (unused: kube's PodGC only logs).
        clock: the clock the pass period and the quarantine run on.
        workers: accepted for the common controller signature; PodGC runs one pass at a time.
        registry: Prometheus registry for ``pod_gc_collector_force_delete_pods_total`` and
            ``pod_gc_collector_force_delete_pod_errors_total`` (labels namespace, reason).
        terminated_pod_threshold: ``--terminated-pod-gc-threshold`` (12500; <= 0 disables
            the terminated-pod pass).
        gc_period: seconds between passes (kube: 20).
        quarantine: seconds a missing node must stay missing before its pods go (kube: 40).

    Attributes:
        passes: completed passes (tests wait on it).
        pod_informer, node_informer: the informers the passes read.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        terminated_pod_threshold: int = DEFAULT_TERMINATED_POD_THRESHOLD,
        gc_period: float = 20.0,
        quarantine: float = 40.0,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._clock = clock
        self.workers = workers
        self.threshold = terminated_pod_threshold
        self._period = gc_period
        self._quarantine_for = quarantine
        self.pod_informer = factory.informer_for(Pod)
        self.node_informer = factory.informer_for(Node)
        self._quarantined: dict[str, float] = {}
        self.passes = 0
        self._deleted: Counter | None = None
        self._errors: Counter | None = None
        if registry is not None:
            self._deleted = Counter(
                "pod_gc_collector_force_delete_pods",
                "Pods deleted by PodGC",
                ["namespace", "reason"],
                registry=registry,
            )
            self._errors = Counter(
                "pod_gc_collector_force_delete_pod_errors",
                "Errors while PodGC deleted pods",
                ["namespace", "reason"],
                registry=registry,
            )

    def __repr__(self) -> str:
        return f"<PodGCController threshold={self.threshold} passes={self.passes}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Wait for the pod and node caches, then run a pass every ``gc_period`` seconds
        (the first at once) until cancelled."""
        await self.pod_informer.wait_for_sync()
        await self.node_informer.wait_for_sync()
        task_status.started()
        deadline = self._clock.monotonic()
        while True:
            try:
                await self.gc_once()
            except Exception as exc:
                log_failed_pass(logger, "podgc: pass", exc)
            deadline += self._period
            now = self._clock.monotonic()
            if deadline < now:  # a pass overran: skip the missed ticks
                deadline = now + self._period
            await self._clock.sleep_until(deadline)

    async def gc_once(self) -> None:
        """One pass of every rule over the current caches."""
        pods = self.pod_informer.lister().list()
        if self.threshold > 0:
            await self._gc_terminated(pods)
        await self._gc_terminating(pods)
        await self._gc_orphaned(pods)
        await self._gc_unscheduled_terminating(pods)
        self.passes += 1

    # -- the four rules ----------------------------------------------------------------------

    async def _gc_terminated(self, pods: list[Pod]) -> None:
        terminated = [p for p in pods if _terminated(p)]
        excess = len(terminated) - self.threshold
        if excess <= 0:
            return
        logger.info("podgc: garbage collecting %d terminated pods", excess)
        terminated.sort(key=_eviction_order)
        await self._delete_all(terminated[:excess], "terminated")

    async def _gc_terminating(self, pods: list[Pod]) -> None:
        nodes = self.node_informer.lister()
        doomed: list[Pod] = []
        for pod in pods:
            if not _terminating(pod) or not _node_name(pod):
                continue
            node = nodes.get_or_none(None, _node_name(pod))
            if node is None:
                continue
            if not _node_ready(node) and _out_of_service(node):
                doomed.append(pod)
        if doomed:
            doomed.sort(key=_eviction_order)
            await self._delete_all(doomed, "out-of-service")

    async def _gc_orphaned(self, pods: list[Pod]) -> None:
        existing = {n.metadata.name for n in self.node_informer.lister().list()}
        now = self._clock.monotonic()
        for pod in pods:
            name = _node_name(pod)
            if name and name not in existing:
                self._quarantined.setdefault(name, now + self._quarantine_for)
        gone: set[str] = set()
        for name, until in list(self._quarantined.items()):
            if until > now:
                continue
            del self._quarantined[name]
            if name in existing:
                continue
            try:
                await self._client.api(Node).get(name)
            except NotFound:
                gone.add(name)
            except ApiError as exc:
                logger.warning("podgc: checking node %s failed: %s", name, exc)
        if not gone:
            return
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists",
        }
        await self._delete_all([p for p in pods if _node_name(p) in gone], "orphaned", condition)

    async def _gc_unscheduled_terminating(self, pods: list[Pod]) -> None:
        doomed = [p for p in pods if _terminating(p) and not _node_name(p)]
        if doomed:
            await self._delete_all(doomed, "unscheduled")

    # -- deleting ----------------------------------------------------------------------------

    async def _delete_all(
        self, pods: Iterable[Pod], reason: str, condition: dict[str, str] | None = None
    ) -> None:
        limiter = anyio.CapacityLimiter(_DELETE_CONCURRENCY)

        async def one(pod: Pod) -> None:
            async with limiter:
                await self._mark_failed_and_delete(pod, reason, condition)

        async with anyio.create_task_group() as tg:
            for pod in pods:
                tg.start_soon(one, pod)

    async def _mark_failed_and_delete(
        self, pod: Pod, reason: str, condition: dict[str, str] | None
    ) -> None:
        namespace = pod.metadata.namespace or ""
        name = pod.metadata.name or ""
        api = self._client.api(Pod, namespace)
        try:
            phase = pod.status.phase if pod.status else None
            if phase not in _TERMINAL:
                status: dict[str, Any] = {"phase": "Failed"}
                if condition is not None:
                    now = format_time(self._clock.now())
                    kept = [
                        to_dict(c)
                        for c in (pod.status.conditions if pod.status else None) or ()
                        if c.type != condition["type"]
                    ]
                    status["conditions"] = [*kept, {**condition, "lastTransitionTime": now}]
                await api.patch_status(
                    name, {"metadata": {"uid": pod.metadata.uid}, "status": status}
                )
            await api.delete(name, grace_period_seconds=0, preconditions={"uid": pod.metadata.uid})
        except NotFound:
            return
        except ApiError as exc:
            logger.warning("podgc: deleting pod %s/%s failed: %s", namespace, name, exc)
            if self._errors is not None:
                self._errors.labels(namespace, reason).inc()
            return
        logger.info("podgc: deleted pod %s/%s (%s)", namespace, name, reason)
        if self._deleted is not None:
            self._deleted.labels(namespace, reason).inc()
