"""Pod events as the Service endpoint controllers see them: the Services a pod change
concerns, synced after the batch period."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import final

from kcm.informers import Lister
from kcm.models import ObjectKey
from kcm.models.core_v1 import Pod, Service

from ._services import services_for_pod, services_to_update_on_pod_change

__all__ = ["ServicePodEvents"]


@final
class ServicePodEvents:
    """An event handler for a pod informer that queues, ``batch_period`` seconds later, the
    Services in the pod's namespace that select it (before and after an update that changes
    what an endpoint shows: labels, readiness, IPs, hostname, deletion). Shared by the
    Endpoints and EndpointSlice controllers (Go's ``addPod``/``updatePod``/``deletePod``).

    The keys go straight to ``add_after`` (the queue's, so that changes within one batch
    period merge into one sync); the handler itself returns none.

    Args:
        services: the Service lister.
        add_after: queues a Service key after a delay, e.g. ``controller.queue.add_after``.
        batch_period: seconds to wait (``--endpoint-updates-batch-period``; 0: at once).
    """

    def __init__(
        self,
        services: Lister[Service],
        add_after: Callable[[ObjectKey, float], None],
        batch_period: float = 0.0,
    ) -> None:
        self._services = services
        self._add_after = add_after
        self.batch_period = batch_period

    def __repr__(self) -> str:
        return f"<ServicePodEvents batch_period={self.batch_period}>"

    def _later(self, keys: Iterable[ObjectKey]) -> Iterable[ObjectKey]:
        for key in keys:
            self._add_after(key, self.batch_period)
        return ()

    def _in_namespace(self, pod: Pod) -> list[Service]:
        return self._services.namespace(pod.metadata.namespace or "").list()

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return self._later(services_for_pod(self._in_namespace(obj), obj))

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        return self._later(services_to_update_on_pod_change(self._in_namespace(new), old, new))

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return self._later(services_for_pod(self._in_namespace(obj), obj))
