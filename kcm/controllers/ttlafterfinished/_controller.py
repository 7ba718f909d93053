"""The TTL-after-finished controller: deletes finished Jobs ``ttlSecondsAfterFinished`` after
they finished (§14: kube-controller-manager's ``ttl-after-finished``).

A Job is considered when it is not being deleted, has ``spec.ttlSecondsAfterFinished`` and a
True ``Complete`` or ``Failed`` condition; it finished at that condition's
``lastTransitionTime``. Before expiry the key is requeued for the remaining time (on the
injected clock); at expiry the Job is read again from the API server (not the cache: the TTL
may just have been raised) and deleted with a UID precondition, so a re-created Job of the
same name is never hit.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import finished_condition, is_finished
from kcm.controllers import add_controller
from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.batch_v1 import Job
from kcm.record import EventRecorder
from kcm.runtime import Controller, Manager, Result, TerminalError

__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "TTLAfterFinishedController",
    "add_to_manager",
    "expire_at",
    "needs_cleanup",
]

logger = logging.getLogger(__name__)

NAME = "ttl-after-finished"
"""kube-controller-manager's name for this controller."""
HELP = "Deletes finished Jobs once their ttlSecondsAfterFinished has passed."
DEFAULT_WORKERS = 5
"""``--concurrent-ttl-after-finished-syncs``."""


def needs_cleanup(job: Job) -> bool:
    """Not being deleted, has a TTL, and has finished."""
    return (
        job.metadata.deletion_timestamp is None
        and job.spec is not None
        and job.spec.ttl_seconds_after_finished is not None
        and is_finished(job)
    )


def expire_at(job: Job) -> datetime:
    """When a finished Job with a TTL expires.

    Raises:
        TerminalError: the finish condition has no ``lastTransitionTime`` (nothing to count
            from; a new event for the Job brings it back).
    """
    cond = finished_condition(job)
    finished = cond.last_transition_time if cond is not None else None
    if finished is None:
        raise TerminalError(
            f"Job {job.metadata.namespace}/{job.metadata.name} has a finish condition without "
            "lastTransitionTime; cannot compute when its TTL expires"
        )
    ttl = job.spec.ttl_seconds_after_finished if job.spec is not None else None
    return finished + timedelta(seconds=ttl or 0)


class _JobEvents:
    """Adds and updates of Jobs that need cleanup; deletes are irrelevant."""

    def create_keys(self, obj: Job, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if needs_cleanup(obj) else ()

    def update_keys(self, old: Job, new: Job) -> Iterable[ObjectKey]:
        return (object_key(new),) if needs_cleanup(new) else ()

    def delete_keys(self, obj: Job, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


class TTLAfterFinishedController:
    """Deletes finished Jobs after their ``ttlSecondsAfterFinished``.

    Args:
        client: the API client Jobs are read and deleted with.
        factory: where the Job informer comes from; run it next to :meth:`run`.
        recorder: event recorder (this controller emits no events today; kept for the
            common controller signature).
        clock: wall time the expiry is compared with, and the requeue delay's clock.
        workers: concurrent syncs (default 5).
        registry: a prometheus registry for the runtime's metrics.
        propagation_policy: how the Job's pods go: ``"Foreground"`` (kube-controller-manager's
            choice: the Job stays, with a ``foregroundDeletion`` finalizer, until the garbage
            collector has deleted its pods) or ``"Background"`` (the Job goes at once, the
            garbage collector deletes the pods afterwards).

    Guarantees:
        * A Job is deleted no earlier than ``lastTransitionTime + ttl`` of its finish
          condition, judged on a fresh read from the API server, and only the incarnation
          that was checked (UID precondition).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = DEFAULT_WORKERS,
        registry: CollectorRegistry | None = None,
        propagation_policy: str = "Foreground",
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._clock = clock
        self._policy = propagation_policy
        informer = factory.informer_for(Job)
        self.jobs = informer.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "ttl_jobs_to_delete",  # Go's work queue name
            self,
            max_concurrent_reconciles=workers,
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(informer, _JobEvents())

    def __repr__(self) -> str:
        return f"<TTLAfterFinishedController workers={self.controller.max_concurrent_reconciles}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Process Jobs until cancelled; ``task_status.started()`` once the cache synced."""
        await self.controller.run(task_status=task_status)

    def _remaining(self, job: Job) -> float | None:
        """Seconds until expiry (<= 0: expired), or None if the Job needs no cleanup."""
        if not needs_cleanup(job):
            return None
        return (expire_at(job) - self._clock.now()).total_seconds()

    async def reconcile(self, request: ObjectKey) -> Result:
        """Requeue until the Job expires, then delete it after a fresh re-check.

        Raises:
            TerminalError: the finish condition has no lastTransitionTime.
            KcmError: reading or deleting failed; retried with backoff.
        """
        job = self.jobs.namespace(request.namespace).get_or_none(request.name)
        if job is None:
            return Result()
        remaining = self._remaining(job)
        if remaining is None:
            return Result()
        if remaining > 0:
            return Result(requeue_after=remaining)
        api = self._client.api(Job, request.namespace)
        try:
            fresh = await api.get(request.name)
        except NotFound:
            return Result()
        remaining = self._remaining(fresh)
        if remaining is None:
            return Result()
        if remaining > 0:
            return Result(requeue_after=remaining)
        logger.info("cleaning up Job %s: its TTL after finishing has expired", request)
        try:
            await api.delete(
                request.name,
                propagation_policy=self._policy,
                preconditions={"uid": fresh.metadata.uid},
            )
        except NotFound:
            pass
        except Conflict:
            # The UID precondition failed: a new Job of that name; its own events bring it.
            pass
        return Result()


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build a :class:`TTLAfterFinishedController` from the manager (events as
    ``ttl-after-finished-controller``) and add it (leader-gated)."""
    add_controller(manager, NAME, TTLAfterFinishedController, workers=workers)
