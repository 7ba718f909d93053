"""The disruption controller's sync (Go's ``DisruptionController.sync``/``trySync``).

One sync of a PodDisruptionBudget key: list the pods its selector matches (an empty selector
matches every pod of the namespace, a missing one none); count what the budget expects
(the pods, for an integer ``minAvailable``; otherwise the sum of the scale of their
controllers, each counted once, pods without a controller left out); keep the
``disruptedPods`` entries the eviction API wrote that are still pending; count the healthy
pods; write the status if any of it changed. A sync that fails for any reason but a
conflict writes the fail-safe status instead (no disruptions allowed, DisruptionAllowed False
with reason SyncFailed) and is not retried until the next event, as in Go. A budget with
pending ``disruptedPods`` is synced again when the earliest of them expires.
"""

from __future__ import annotations

import logging
from typing import Unpack, final

import anyio
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.controllerkit import ControllerBase, ControllerOptions
from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.apps_v1 import Deployment, ReplicaSet, StatefulSet
from kcm.models.core_v1 import Pod, ReplicationController
from kcm.models.policy_v1 import PodDisruptionBudget
from kcm.runtime import Controller, Result, enqueue_mapped, enqueue_object, get_controller_of
from kcm.selectors import LabelSelector, SelectorParseError
from kcm.workqueue import default_controller_rate_limiter

from ._budget import (
    desired_healthy,
    fail_safe_status,
    needs_expected_scale,
    new_status,
    status_is_current,
    status_of,
)
from ._finders import ControllerFinders, ScaleLookupError
from ._pod_events import PodEvents

__all__ = ["DEFAULT_WORKERS", "NAME", "DisruptionController"]

logger = logging.getLogger(__name__)

NAME = "disruption"
"""kube-controller-manager's name for this controller."""

DEFAULT_WORKERS = 1
"""kube-controller-manager runs one worker (there is no flag)."""


class _SyncError(Exception):
    """A sync failed; the message is what the fail-safe condition says."""


def _no_keys(_: object) -> tuple[ObjectKey, ...]:
    return ()


@final
class DisruptionController(ControllerBase):
    """kube-controller-manager's ``disruption`` controller: PodDisruptionBudget status.

    Args:
        client: writes budget status; reads ``/scale`` of custom controllers.
        factory: the PodDisruptionBudget, Pod, ReplicationController, ReplicaSet, Deployment
            and StatefulSet informers.
        recorder: events (Go's source is ``controllermanager``): ``NoPods`` and
            ``CalculateExpectedPodCountFailed`` on the budget, ``NotDeleted`` and
            ``MultiplePodDisruptionBudgets`` on pods.
        clock: the "now" of ``disruptedPods`` expiry and the work queue's clock.
        workers: concurrent syncs (1, as kube-controller-manager).
        registry: Prometheus registry for the controller and work queue metrics.

    Guarantees:
        * ``disruptionsAllowed`` is 0 while the budget expects no pods, while its sync fails,
          and whenever the healthy pods do not exceed ``desiredHealthy``.
        * A pod the eviction API let go counts as unhealthy for two minutes (or until it is
          deleted); then its entry is dropped with a ``NotDeleted`` warning.
        * ``observedGeneration`` is written only with numbers counted for that generation.
    """

    default_workers = DEFAULT_WORKERS

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        budget_informer = factory.informer_for(PodDisruptionBudget)
        pod_informer = factory.informer_for(Pod)
        rc_informer = factory.informer_for(ReplicationController)
        rs_informer = factory.informer_for(ReplicaSet)
        deployment_informer = factory.informer_for(Deployment)
        set_informer = factory.informer_for(StatefulSet)
        self.budgets = budget_informer.lister()
        self.pods = pod_informer.lister()
        self.finders = ControllerFinders(
            client,
            replication_controllers=rc_informer.lister(),
            replica_sets=rs_informer.lister(),
            deployments=deployment_informer.lister(),
            stateful_sets=set_informer.lister(),
        )
        self.controller: Controller[ObjectKey] = self.new_controller(
            NAME, self, rate_limiter=default_controller_rate_limiter(clock=self.clock)
        )
        self.controller.watch(budget_informer, enqueue_object())
        self.controller.watch(pod_informer, PodEvents(self.budgets, self.recorder))
        # Read through listers only (as in Go); watched so that syncs wait for their caches.
        self.controller.watch(rc_informer, enqueue_mapped(_no_keys))
        self.controller.watch(rs_informer, enqueue_mapped(_no_keys))
        self.controller.watch(deployment_informer, enqueue_mapped(_no_keys))
        self.controller.watch(set_informer, enqueue_mapped(_no_keys))

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync budgets until cancelled; ``task_status.started()`` once the caches have synced
        and the workers run (the factory must run too)."""
        await self.controller.run(task_status=task_status)

    async def reconcile(self, key: ObjectKey) -> Result:
        """One sync of a budget (see the module docstring).

        Raises:
            Conflict: the status write conflicted (retried with backoff, no fail-safe).
            KcmError: the fail-safe write failed too.
        """
        pdb = self.budgets.namespace(key.namespace).get_or_none(key.name)
        if pdb is None:
            return Result()
        try:
            return await self._try_sync(pdb)
        except Conflict:
            raise
        except (_SyncError, NotFound) as exc:
            message = str(exc)
        except Exception as exc:
            message = getattr(exc, "message", None) or str(exc)
        logger.error("Failed to sync pdb %s/%s: %s", key.namespace, key.name, message)
        await self._write(fail_safe_status(pdb, message, self._clock.now()))
        return Result()

    async def _try_sync(self, pdb: PodDisruptionBudget) -> Result:
        pods = self._pods_for(pdb)
        if not pods:
            self._recorder.event(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired = await self._expected_count(pdb, pods)
        except (ScaleLookupError, ValueError) as exc:
            self._recorder.event(
                pdb,
                "Warning",
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {exc}",
            )
            raise _SyncError(str(exc)) from exc
        now = self._clock.now()
        status, disrupted = status_of(pdb, pods, expected, desired, now)
        for name in disrupted.expired:
            pod = next(p for p in pods if p.metadata.name == name)
            # Go names the budget's namespace twice here; the message is kept as it is.
            self._recorder.event(
                pod,
                "Warning",
                "NotDeleted",
                f"Pod was expected by PDB {pdb.metadata.namespace}/{pdb.metadata.namespace} "
                "to be deleted but it wasn't",
            )
        if not status_is_current(pdb, status):
            await self._write(new_status(pdb, status, now))
        if disrupted.recheck_at is not None:
            delay = (disrupted.recheck_at - now).total_seconds()
            return Result(requeue_after=max(delay, 0.0))
        return Result()

    def _pods_for(self, pdb: PodDisruptionBudget) -> list[Pod]:
        """``getPodsForPdb``: the namespace's pods the selector matches.

        Raises:
            _SyncError: the selector is invalid (a ``NoPods`` warning says so).
        """
        try:
            selector = LabelSelector.from_model(pdb.spec.selector if pdb.spec else None)
        except SelectorParseError as exc:
            self._recorder.event(pdb, "Warning", "NoPods", f"Failed to get pods: {exc}")
            raise _SyncError(str(exc)) from exc
        pods = self.pods.namespace(pdb.metadata.namespace or "").list()
        return [p for p in pods if selector.matches(p.metadata.labels)]

    async def _expected_count(self, pdb: PodDisruptionBudget, pods: list[Pod]) -> tuple[int, int]:
        """``getExpectedPodCount``: ``(expectedPods, desiredHealthy)``.

        Raises:
            ScaleLookupError: a pod's controller was not found (``found no controllers for pod
                "<name>"``) or its scale could not be read.
            ValueError: a value that is neither an integer nor a percentage.
        """
        expected = 0
        if needs_expected_scale(pdb):
            expected = await self._expected_scale(pods)
        return desired_healthy(pdb, len(pods), expected)

    async def _expected_scale(self, pods: list[Pod]) -> int:
        """The sum of the scale of the pods' controllers, each counted once; pods without a
        controller are left out (1.24 only logs them)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = get_controller_of(pod)
            if ref is None:
                unmanaged.append(pod.metadata.name or "")
                continue
            if ref.uid in scales:
                continue
            found = await self.finders.find(ref, pod.metadata.namespace or "")
            if found is None:
                raise ScaleLookupError(f'found no controllers for pod "{pod.metadata.name}"')
            scales[found.uid] = found.scale
        if unmanaged:
            logger.debug("found unmanaged pods associated with this PDB: %s", ",".join(unmanaged))
        return sum(scales.values())

    async def _write(self, pdb: PodDisruptionBudget) -> None:
        """``UpdateStatus`` with the resourceVersion read: a conflict is not retried here (the
        key comes back with backoff and is counted again)."""
        api = self._client.api(PodDisruptionBudget, pdb.metadata.namespace)
        await api.replace_status(pdb)
