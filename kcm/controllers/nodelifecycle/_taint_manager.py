"""The NoExecute taint manager: evicts pods from nodes with taints they do not tolerate (§12).

A pod on a node with NoExecute taints is deleted at once if some taint is not tolerated, after
the smallest ``tolerationSeconds`` of the tolerations that match (counted from when the
eviction was first scheduled) if all are, and never if none of those has seconds. Taints going
away, or the pod's tolerations changing to tolerate them for ever, cancel a scheduled
eviction. Events (reason ``TaintManagerEviction``) say "Marking for deletion Pod ns/name" and
"Cancelling deletion of Pod ns/name", as kube-controller-manager's. Timing is the injected
clock's (``requeue_after``), never a real sleep.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import Node, ObjectKey, ObjectReference, Pod, object_key
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result

from ._pods_by_node import ensure_node_index, pods_on_node
from ._taints import matching_tolerations, min_toleration_seconds, no_execute_taints

__all__ = ["EVICTION_REASON", "NoExecuteTaintManager"]

logger = logging.getLogger(__name__)

EVICTION_REASON = "TaintManagerEviction"


@dataclass
class _Eviction:
    created_at: float
    fire_at: float
    fired: bool = False


def _node_name(pod: Pod) -> str:
    return (pod.spec.node_name if pod.spec else None) or ""


def _tolerations(pod: Pod) -> list[object]:
    return list((pod.spec.tolerations if pod.spec else None) or ())


class _PodEvents:
    """A pod is looked at when it is bound, its tolerations change, or it is deleted."""

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if _node_name(obj) else ()

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        if _node_name(old) == _node_name(new) and _tolerations(old) == _tolerations(new):
            return ()
        return (object_key(new),)

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)


class _NodeEvents:
    """Every pod of a node whose NoExecute taints changed."""

    def __init__(self, manager: NoExecuteTaintManager) -> None:
        self._manager = manager

    def _pods(self, node: Node) -> list[ObjectKey]:
        return [object_key(p) for p in pods_on_node(self._manager.pods, node.metadata.name or "")]

    def create_keys(self, obj: Node, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return self._pods(obj) if no_execute_taints(obj) else ()

    def update_keys(self, old: Node, new: Node) -> Iterable[ObjectKey]:
        if no_execute_taints(old) == no_execute_taints(new):
            return ()
        return self._pods(new)

    def delete_keys(self, obj: Node, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


class NoExecuteTaintManager:
    """Deletes pods that do not (or no longer) tolerate their node's NoExecute taints.

    Args:
        client: the API client pods are deleted with.
        factory: the shared informer factory (Pod and Node informers).
        recorder: where ``TaintManagerEviction`` events go.
        clock: the clock ``tolerationSeconds`` count on.
        registry: Prometheus registry for the runtime controller's metrics.
        workers: concurrent pod syncs.

    Guarantees:
        * A pod is deleted no earlier than the smallest matching ``tolerationSeconds`` after
          its eviction was scheduled, and at most once per scheduling (a pod evicted once is
          not evicted again until the eviction is cancelled).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        registry: CollectorRegistry | None = None,
        workers: int = 8,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._clock = clock
        pod_informer = factory.informer_for(Pod)
        ensure_node_index(pod_informer)
        node_informer = factory.informer_for(Node)
        self.pods = pod_informer.lister()
        self.nodes = node_informer.lister()
        self.evictions: dict[ObjectKey, _Eviction] = {}
        self.controller: Controller[ObjectKey] = Controller(
            "noexec_taint_pod",  # Go's pod queue (its node queue feeds it)
            self,
            max_concurrent_reconciles=workers,
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(pod_informer, _PodEvents(), kind="Pod")
        self.controller.watch(node_informer, _NodeEvents(self), kind="Node")

    def __repr__(self) -> str:
        return f"<NoExecuteTaintManager scheduled={len(self.evictions)}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Process pods until cancelled; ``task_status.started()`` once the caches synced."""
        await self.controller.run(task_status=task_status)

    def scheduled_at(self, key: ObjectKey) -> float | None:
        """When the pod's pending eviction fires (clock's monotonic time), if one is pending."""
        eviction = self.evictions.get(key)
        return eviction.fire_at if eviction is not None and not eviction.fired else None

    def _cancel(self, key: ObjectKey, *, event: bool) -> None:
        eviction = self.evictions.pop(key, None)
        if event and eviction is not None and not eviction.fired:
            ref = ObjectReference(
                api_version="v1", kind="Pod", namespace=key.namespace, name=key.name
            )
            self._recorder.event(
                ref, "Normal", EVICTION_REASON, f"Cancelling deletion of Pod {key}"
            )

    def _schedule(self, key: ObjectKey, created_at: float, fire_at: float) -> None:
        if key not in self.evictions:  # scheduled or done already
            self.evictions[key] = _Eviction(created_at, fire_at)

    async def reconcile(self, key: ObjectKey) -> Result:
        """Schedule, cancel or carry out the pod's eviction.

        Raises:
            KcmError: the delete failed; retried with backoff.
        """
        pod = self.pods.namespace(key.namespace).get_or_none(key.name)
        if pod is None:
            self._cancel(key, event=True)
            return Result()
        node_name = _node_name(pod)
        node = self.nodes.get_or_none(None, node_name) if node_name else None
        if node is None:
            return Result()
        taints = no_execute_taints(node)
        if not taints:
            self._cancel(key, event=True)
            return Result()
        now = self._clock.monotonic()
        tolerated, used = matching_tolerations(
            taints, list((pod.spec.tolerations if pod.spec else None) or ())
        )
        if not tolerated:
            self._cancel(key, event=False)
            self._schedule(key, now, now)
        else:
            seconds = min_toleration_seconds(used)
            if seconds < 0:
                self._cancel(key, event=True)
                return Result()
            pending = self.evictions.get(key)
            if pending is not None and not pending.fired and pending.created_at < now:
                pass  # keep the eviction scheduled first (kube's processPodOnNode)
            else:
                if pending is not None and not pending.fired:
                    self._cancel(key, event=False)
                self._schedule(key, now, now + seconds)
        return await self._fire_if_due(key, pod)

    async def _fire_if_due(self, key: ObjectKey, pod: Pod) -> Result:
        eviction = self.evictions.get(key)
        if eviction is None or eviction.fired:
            return Result()
        remaining = eviction.fire_at - self._clock.monotonic()
        if remaining > 0:
            return Result(requeue_after=remaining)
        self._recorder.event(pod, "Normal", EVICTION_REASON, f"Marking for deletion Pod {key}")
        logger.info("taint manager: deleting pod %s (NoExecute taint on %s)", key, _node_name(pod))
        try:
            await self._client.api(Pod, namespace=key.namespace).delete(key.name)
        except NotFound:
            pass
        eviction.fired = True
        return Result()
