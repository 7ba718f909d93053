"""The simulation's queue controllers: the kit's :class:`~kcm.controllerkit.QueueController`
on the runtime controller's retry policy.

The simulated CSI driver's sidecars (provisioner, attacher, node plugin, resizer) and the
kubelet's volumes-in-use reporter are single-queue controllers like kube-controller-manager's,
but they are not kube-controller-manager's: they have always retried a failed key with
:class:`kcm.runtime.Controller`'s own backoff (per key, 5 ms doubling to 1000 s, no overall
token bucket) rather than client-go's ``DefaultControllerRateLimiter``, which
:class:`QueueController` gives kube's queues. :class:`SimulationQueueController` keeps that.
"""

from __future__ import annotations

from abc import ABC

from kcm.clock import Clock
from kcm.controllerkit import QueueController
from kcm.models import ObjectKey
from kcm.workqueue import ItemExponentialFailureRateLimiter, RateLimiter

__all__ = ["SimulationQueueController"]


class SimulationQueueController(QueueController, ABC):
    """A :class:`~kcm.controllerkit.QueueController` whose queue backs off as a plain
    :class:`kcm.runtime.Controller`'s does (a subclass still sets ``queue_name`` and writes
    ``watch_informers`` and ``reconcile``)."""

    def rate_limiter(self, clock: Clock) -> RateLimiter[ObjectKey]:
        """Per-key exponential backoff from 5 ms to 1000 s, without client-go's bucket."""
        return ItemExponentialFailureRateLimiter(clock=clock)
