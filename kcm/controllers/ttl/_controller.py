"""The TTL controller: ``node.alpha.kubernetes.io/ttl`` on every Node, by cluster size.

Kubelets cache Secrets and ConfigMaps for the TTL the annotation gives (seconds); bigger
clusters get longer TTLs to spare the API server. The size steps overlap (hysteresis), so a
cluster hovering around a boundary does not flip: it moves up a step when the node count
exceeds the step's maximum and down when it falls below the step's minimum. A Node is
annotated when it is added or updated (kubelets update theirs every few seconds, so a change
of step reaches every Node within that period), as kube-controller-manager's ``ttl``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import Node, ObjectKey, object_key
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result

__all__ = ["TTL_ANNOTATION", "TTL_BOUNDARIES", "TTLController", "TTLSteps"]

logger = logging.getLogger(__name__)

TTL_ANNOTATION = "node.alpha.kubernetes.io/ttl"

TTL_BOUNDARIES: tuple[tuple[int, int, int], ...] = (
    (0, 100, 0),
    (90, 500, 15),
    (450, 1000, 30),
    (900, 2000, 60),
    (1800, 10000, 300),
    (9000, 2**31 - 1, 600),
)
"""``(min nodes, max nodes, ttl seconds)`` per step: kube's ``ttlBoundaries``."""


class TTLSteps:
    """The node count and the step it puts the cluster in (moved one step per node event)."""

    def __init__(self) -> None:
        self.nodes = 0
        self.step = 0

    def __repr__(self) -> str:
        return f"<TTLSteps nodes={self.nodes} ttl={self.ttl}>"

    @property
    def ttl(self) -> int:
        """The TTL (seconds) every Node should carry now."""
        return TTL_BOUNDARIES[self.step][2]

    def added(self) -> None:
        self.nodes += 1
        if self.nodes > TTL_BOUNDARIES[self.step][1]:
            self.step += 1

    def removed(self) -> None:
        self.nodes -= 1
        if self.nodes < TTL_BOUNDARIES[self.step][0]:
            self.step -= 1


class _NodeEvents:
    def __init__(self, steps: TTLSteps) -> None:
        self._steps = steps

    def create_keys(self, obj: Node, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        self._steps.added()
        return (object_key(obj),)

    def update_keys(self, old: Node, new: Node) -> Iterable[ObjectKey]:
        return (object_key(new),)

    def delete_keys(self, obj: Node, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        self._steps.removed()
        return ()


def _current(node: Node) -> int | None:
    value = (node.metadata.annotations or {}).get(TTL_ANNOTATION)
    try:
        return int(value) if value is not None else None
    except ValueError:
        logger.warning(
            "node %s: %s=%r is not an integer", node.metadata.name, TTL_ANNOTATION, value
        )
        return None


class TTLController:
    """Keeps :data:`TTL_ANNOTATION` on every Node at the TTL for the cluster's size.

    Args:
        client: the API client Nodes are patched with.
        factory: the shared informer factory (the Node informer).
        recorder: accepted for the common signature (kube's TTL controller records no events).
        clock: the work queue's clock.
        workers: concurrent node syncs (kube: 5).
        registry: Prometheus registry.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 5,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._nodes_api = client.api(Node)
        self.steps = TTLSteps()
        informer = factory.informer_for(Node)
        self.nodes = informer.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "ttlcontroller",  # Go's work queue name
            self,
            max_concurrent_reconciles=workers,
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(informer, _NodeEvents(self.steps), kind="Node")

    def __repr__(self) -> str:
        return f"<TTLController {self.steps!r}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Annotate Nodes until cancelled; ``task_status.started()`` once the cache synced."""
        await self.controller.run(task_status=task_status)

    async def reconcile(self, key: ObjectKey) -> Result:
        """Patch the Node's annotation if it differs from the desired TTL.

        Raises:
            KcmError: the patch failed; retried with backoff.
        """
        node = self.nodes.get_or_none(None, key.name)
        if node is None:
            return Result()
        desired = self.steps.ttl
        if _current(node) == desired:
            return Result()
        try:
            await self._nodes_api.patch(
                key.name, {"metadata": {"annotations": {TTL_ANNOTATION: str(desired)}}}
            )
        except NotFound:
            return Result()
        logger.debug("changed ttl annotation of node %s to %ss", key.name, desired)
        return Result()
