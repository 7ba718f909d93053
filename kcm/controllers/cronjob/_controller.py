"""The CronJob controller: creates a Job at each scheduled time (§9: kube-controller-manager's
``cronjob``, the v2 controller).

Each sync of one CronJob reconciles ``status.active`` with the Jobs it controls (by
controllerRef name), then, unless suspended or deleting, works out the most recent start
time that is due, applies ``startingDeadlineSeconds`` and ``concurrencyPolicy``, creates the
Job ``<cronjob>-<scheduled minutes since the epoch>``, prunes finished Jobs beyond the history
limits, and asks to be reconciled again at the next start time (``Result(requeue_after)`` on
the injected clock: a fake clock in tests).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Unpack

import anyio
import msgspec
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.controllerkit import (
    ControllerBase,
    ControllerOptions,
    error_text,
    finished_condition,
    is_namespace_terminating,
)
from kcm.controllers import add_controller
from kcm.errors import AlreadyExists, KcmError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.batch_v1 import CronJob, CronJobStatus, Job, JobSpec
from kcm.models.core_v1 import ObjectReference
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import (
    Controller,
    Manager,
    Result,
    enqueue_object,
    enqueue_owner,
    get_controller_of,
    new_controller_ref,
)

from ._schedule import (
    MAX_MISSED,
    Schedule,
    ScheduleError,
    local_time_zone,
    most_recent_time,
    parse_schedule,
    resolve_time_zone,
)

__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "SCHEDULED_TIMESTAMP_ANNOTATION",
    "CronJobController",
    "add_to_manager",
    "job_name_for",
]

logger = logging.getLogger(__name__)

NAME = "cronjob"
"""kube-controller-manager's name for this controller."""
HELP = "Creates Jobs on a cron schedule, with concurrency policies and history limits."
DEFAULT_WORKERS = 5
SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
"""Annotation on each created Job: its scheduled time (RFC 3339, in the CronJob's zone)."""
_NEXT_SYNC_SLACK = 0.1
"""Requeue this long after the next start time so it is surely due."""
_API_VERSION = "batch/v1"
_KIND = "CronJob"


def job_name_for(cronjob_name: str, scheduled: datetime) -> str:
    """``<cronjob>-<scheduled time in whole minutes since the epoch>``."""
    return f"{cronjob_name}-{int(scheduled.timestamp()) // 60}"


def _finished(job: Job) -> str | None:
    """``"Complete"`` or ``"Failed"`` if the Job finished, else None."""
    cond = finished_condition(job)
    return cond.type if cond is not None else None


def _cronjob_key_of(job: Job) -> ObjectKey | None:
    ref = get_controller_of(job)
    if ref is None or ref.kind != _KIND or not (ref.api_version or "").startswith("batch/"):
        return None
    return ObjectKey(job.metadata.namespace or "", ref.name or "")


class _NotCreated(Exception):
    """The Job was not created and nothing is to be reported (a terminating namespace)."""


def _same_time(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and b is not None and int(a.timestamp()) == int(b.timestamp())


class CronJobController(ControllerBase):
    """Reconciles CronJobs (kube-controller-manager's ``cronjob`` controller).

    Args:
        client: the API client Jobs and CronJob status are written with.
        factory: where the CronJob and Job informers come from; run it next to :meth:`run`.
        recorder: receives the events (``SuccessfulCreate``, ``SawCompletedJob``,
            ``JobAlreadyActive``, ``TooManyMissedTimes``, ...), attached to the CronJob.
        clock: the wall time schedules are evaluated at and the requeue clock.
        workers: concurrent syncs (default 5).
        registry: a prometheus registry for the runtime's metrics.
        time_zone: the zone of CronJobs without ``spec.timeZone``; default: this process's
            local zone (:func:`local_time_zone`, as kube-controller-manager's).

    Guarantees:
        * At most one Job per scheduled time: the Job's name is derived from it, and a
          schedule time equal to ``status.lastScheduleTime`` is never started again.
        * With more than 100 missed start times only the most recent one is started (with a
          Warning ``TooManyMissedTimes``).
        * A Job refused because the namespace is terminating is not reported (no event, no
          retry before the next start time).
    """

    default_workers = DEFAULT_WORKERS

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        time_zone: tzinfo | None = None,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        self.default_time_zone: tzinfo = time_zone if time_zone is not None else local_time_zone()
        """The zone of CronJobs without ``spec.timeZone``."""
        cj_informer = factory.informer_for(CronJob)
        job_informer = factory.informer_for(Job)
        self.cronjobs = cj_informer.lister()
        self.jobs = job_informer.lister()
        self.controller: Controller[ObjectKey] = self.new_controller(NAME, self)
        self.controller.watch(cj_informer, enqueue_object())
        self.controller.watch(job_informer, enqueue_owner(CronJob))  # the controlling CronJob

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync CronJobs until cancelled; ``task_status.started()`` once caches synced."""
        await self.controller.run(task_status=task_status)

    async def reconcile(self, request: ObjectKey) -> Result:
        """Sync one CronJob (see the module docstring).

        Raises:
            KcmError: a write failed; retried with backoff.
        """
        cj = self.cronjobs.namespace(request.namespace).get_or_none(request.name)
        if cj is None:
            return Result()
        return await _Sync(self, request, cj).run()


class _Sync:
    def __init__(self, ctl: CronJobController, key: ObjectKey, cj: CronJob) -> None:
        self.ctl = ctl
        self.key = key
        self.cj = cj
        self.cj_api = ctl.client.api(CronJob, key.namespace)
        self.job_api = ctl.client.api(Job, key.namespace)
        self.now = ctl.clock.now()

    def _event(self, type_: str, reason: str, message: str) -> None:
        self.ctl.recorder.event(self.cj, type_, reason, message)

    def _children(self) -> list[Job]:
        return [
            j
            for j in self.ctl.jobs.namespace(self.key.namespace).list()
            if _cronjob_key_of(j) == self.key
        ]

    async def run(self) -> Result:
        cj = self.cj
        children = self._children()
        listed = {ref.uid for ref in (cj.status.active if cj.status else None) or ()}
        if any(_finished(j) is None and j.metadata.uid not in listed for j in children):
            # Probably our own Job, created after the cached CronJob was read: re-read it.
            try:
                fresh = await self.cj_api.get(self.key.name)
            except NotFound:
                return Result()
            if fresh.metadata.uid == cj.metadata.uid:
                self.cj = cj = fresh
        status = await self._reconcile_active(cj.status or CronJobStatus(), children)
        spec = cj.spec
        if spec is None or cj.metadata.deletion_timestamp is not None or spec.suspend:
            await self._write_status(status)
            if spec is not None and cj.metadata.deletion_timestamp is None:
                await self._clean_history(children)
            return Result()
        try:
            tz = resolve_time_zone(spec.time_zone, default=self.ctl.default_time_zone)
        except ScheduleError as exc:
            await self._write_status(status)
            self._event("Warning", "UnknownTimeZone", str(exc))
            return Result()
        try:
            schedule = parse_schedule(spec.schedule or "", tz)
        except ScheduleError as exc:
            await self._write_status(status)
            reason = "UnsupportedSchedule" if "not supported" in str(exc) else "UnparseableSchedule"
            self._event("Warning", reason, f"unparseable schedule: {spec.schedule!r} : {exc}")
            return Result()

        status = await self._maybe_start(status, children, schedule)
        cj = await self._write_status(status)
        await self._clean_history(children)
        # kube's nextScheduleTimeDuration: the start time after the most recent one due (or
        # after the earliest time considered), which for @every counts from the last start
        earliest = status.last_schedule_time or cj.metadata.creation_timestamp or self.now
        latest, _ = most_recent_time(schedule, earliest, self.now)
        next_time = schedule.next_after(latest or earliest)
        wait = (next_time - self.ctl.clock.now()).total_seconds() + _NEXT_SYNC_SLACK
        return Result(requeue_after=max(wait, _NEXT_SYNC_SLACK))

    async def _reconcile_active(self, status: CronJobStatus, children: list[Job]) -> CronJobStatus:
        active = list(status.active or ())
        active_uids = {ref.uid for ref in active}
        last_successful = status.last_successful_time
        for job in children:
            uid = job.metadata.uid
            state = _finished(job)
            if uid not in active_uids and state is None:
                self._event(
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {job.metadata.name}",
                )
            elif uid in active_uids and state is not None:
                active = [ref for ref in active if ref.uid != uid]
                self._event(
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {job.metadata.name}, status: {state}",
                )
            if state == "Complete" and job.status is not None and job.status.completion_time:
                done = job.status.completion_time
                if last_successful is None or done > last_successful:
                    last_successful = done
        known = {j.metadata.uid for j in children}
        for ref in list(active):
            if ref.uid in known:
                continue
            try:
                live = await self.job_api.get(str(ref.name))
            except NotFound:
                live = None
            if live is None or live.metadata.uid != ref.uid:
                active = [r for r in active if r.uid != ref.uid]
                self._event("Normal", "MissingJob", f"Active job went missing: {ref.name}")
        return msgspec.structs.replace(
            status, active=active or None, last_successful_time=last_successful
        )

    async def _maybe_start(
        self, status: CronJobStatus, children: list[Job], schedule: Schedule
    ) -> CronJobStatus:
        cj = self.cj
        spec = cj.spec
        assert spec is not None
        earliest = status.last_schedule_time or cj.metadata.creation_timestamp or self.now
        deadline = spec.starting_deadline_seconds
        if deadline is not None:
            earliest = max(earliest, self.now - timedelta(seconds=deadline))
        scheduled, missed = most_recent_time(schedule, earliest, self.now)
        if scheduled is None:
            return status
        if missed > MAX_MISSED:
            self._event(
                "Warning",
                "TooManyMissedTimes",
                f"too many missed start times: {missed}. Set or decrease "
                ".spec.startingDeadlineSeconds or check clock skew",
            )
        if deadline is not None and scheduled + timedelta(seconds=deadline) < self.now:
            self._event(
                "Warning",
                "MissSchedule",
                f"Missed scheduled time to start a job: {scheduled.isoformat()}",
            )
            return status
        name = job_name_for(str(cj.metadata.name), scheduled)
        active = list(status.active or ())
        if any(ref.name == name for ref in active) or _same_time(
            status.last_schedule_time, scheduled
        ):
            return status
        policy = spec.concurrency_policy or "Allow"
        if policy == "Forbid" and active:
            self._event(
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy "
                "is Forbid",
            )
            return status
        if policy == "Replace":
            for ref in list(active):
                await self._delete_job(str(ref.name), ref.uid)
                active = [r for r in active if r.uid != ref.uid]
        try:
            job = await self._create_job(name, scheduled, children)
        except _NotCreated:
            return msgspec.structs.replace(status, active=active or None)
        if job is not None:
            active.append(
                ObjectReference(
                    api_version=_API_VERSION,
                    kind="Job",
                    name=job.metadata.name,
                    namespace=job.metadata.namespace,
                    uid=job.metadata.uid,
                    resource_version=job.metadata.resource_version,
                )
            )
        return msgspec.structs.replace(
            status, active=active or None, last_schedule_time=scheduled.astimezone(UTC)
        )

    async def _create_job(self, name: str, scheduled: datetime, children: list[Job]) -> Job | None:
        cj = self.cj
        assert cj.spec is not None
        template = cj.spec.job_template
        tmeta = (template.metadata if template is not None else None) or ObjectMeta()
        annotations = dict(tmeta.annotations or {})
        annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = scheduled.isoformat()
        job = Job(
            metadata=ObjectMeta(
                name=name,
                namespace=self.key.namespace,
                labels=dict(tmeta.labels) if tmeta.labels else None,
                annotations=annotations,
                owner_references=[new_controller_ref(cj, _API_VERSION, _KIND)],
            ),
            spec=(template.spec if template is not None else None) or JobSpec(),
        )
        try:
            created = await self.job_api.create(job)
        except AlreadyExists:
            existing = next((j for j in children if j.metadata.name == name), None)
            if existing is None:
                existing = await self.job_api.get(name)
            ref = get_controller_of(existing)
            if ref is not None and ref.uid == cj.metadata.uid:
                return None if _finished(existing) else existing
            self._event("Warning", "FailedCreate", f"Error creating job: {name} already exists")
            raise
        except KcmError as exc:
            if is_namespace_terminating(exc):
                # every create fails until the namespace is gone: nothing to report or retry
                logger.info("cronjob %s: namespace is terminating, not creating %s", self.key, name)
                raise _NotCreated from exc
            self._event("Warning", "FailedCreate", f"Error creating job: {error_text(exc)}")
            raise
        self._event("Normal", "SuccessfulCreate", f"Created job {created.metadata.name}")
        return created

    async def _delete_job(self, name: str, uid: str | None) -> None:
        try:
            await self.job_api.delete(
                name, propagation_policy="Background", preconditions={"uid": uid}
            )
        except NotFound:
            return
        except KcmError as exc:
            self._event("Warning", "FailedDelete", f"Deleted job: {error_text(exc)}")
            raise
        self._event("Normal", "SuccessfulDelete", f"Deleted job {name}")

    async def _clean_history(self, children: list[Job]) -> None:
        spec = self.cj.spec
        assert spec is not None
        succeeded_limit = spec.successful_jobs_history_limit
        failed_limit = spec.failed_jobs_history_limit
        limits = {
            "Complete": 3 if succeeded_limit is None else succeeded_limit,
            "Failed": 1 if failed_limit is None else failed_limit,
        }
        for state, limit in limits.items():
            done = [
                j
                for j in children
                if _finished(j) == state and j.metadata.deletion_timestamp is None
            ]
            if len(done) <= limit:
                continue

            def order(j: Job) -> tuple[int, float, str]:
                start = j.status.start_time if j.status else None
                return (
                    0 if start is not None else 1,
                    start.timestamp() if start is not None else 0.0,
                    str(j.metadata.name),
                )

            done.sort(key=order)
            for job in done[: len(done) - limit]:
                await self._delete_job(str(job.metadata.name), job.metadata.uid)

    async def _write_status(self, status: CronJobStatus) -> CronJob:
        cj = self.cj
        if status == (cj.status or CronJobStatus()):
            return cj
        new = msgspec.structs.replace(cj, status=status)
        self.cj = await self.cj_api.update(cj, new, subresource="status")
        return self.cj


def add_to_manager(
    manager: Manager, *, workers: int = DEFAULT_WORKERS, time_zone: tzinfo | None = None
) -> None:
    """Build a :class:`CronJobController` from the manager (events as
    ``cronjob-controller``; CronJobs without ``spec.timeZone`` in ``time_zone``, default the
    local zone) and add it (leader-gated)."""
    add_controller(manager, NAME, CronJobController, workers=workers, time_zone=time_zone)
