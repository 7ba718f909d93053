"""One sync of one Job (kube's ``syncJob``), in named steps: claim pods, account for finished
ones through ``status.uncountedTerminatedPods``, decide failure or success, manage active
pods, write the status. :class:`~._controller.JobController` runs one :class:`_Sync` per key.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio
import msgspec

from kcm.controllerkit import (
    ControllerRefManager,
    error_text,
    is_namespace_terminating,
    is_pod_active,
    is_pod_ready,
    recheck_deletion_timestamp,
    slow_start_batch,
)
from kcm.errors import KcmError, NotFound
from kcm.models import ObjectKey, from_dict, object_key, to_dict
from kcm.models.batch_v1 import Job, JobCondition, JobStatus, UncountedTerminatedPods
from kcm.models.core_v1 import Pod, PodSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import (
    Result,
    new_controller_ref,
)
from kcm.selectors import LabelSelector

from ._backoff import BackoffRecord, next_record
from ._indexes import format_indexes, parse_indexes
from ._pods import (
    COMPLETION_INDEX_KEY,
    JOB_TRACKING_FINALIZER,
    completion_index,
    deletion_rank,
    has_tracking_finalizer,
    is_failed,
    is_terminating,
    match_pod_failure_policy,
    only_replace_failed_pods,
    past_backoff_limit_on_failure,
)

if TYPE_CHECKING:
    from ._controller import JobController

logger = logging.getLogger(__name__)

MAX_UNCOUNTED_PODS = 500
"""``status.uncountedTerminatedPods`` holds at most this many UIDs, and a sync removes at
most this many tracking finalizers (kube's ``MaxUncountedPods``): the status stays small and
a big Job cannot starve the others."""
MAX_POD_CREATE_DELETE_PER_SYNC = 500

_API_VERSION = "batch/v1"
_KIND = "Job"


def _condition(conditions: Iterable[JobCondition] | None, type_: str) -> JobCondition | None:
    for cond in conditions or ():
        if cond.type == type_ and cond.status == "True":
            return cond
    return None


_Finish: TypeAlias = tuple[str, str, str]
"""How a Job finishes: the condition type (``Complete``/``Failed``), its reason and message."""


@dataclass(slots=True)
class _Counted:
    """The finished pods one sync newly accounts for."""

    succeeded: list[Pod] = field(default_factory=list)
    failed: list[Pod] = field(default_factory=list)
    ignored: list[Pod] = field(default_factory=list)
    fail_job_message: str | None = None


class _Sync:
    """One sync of one Job; holds the per-sync state k8s keeps in ``syncJobCtx`` (the
    attributes below the first block are filled in by :meth:`run`'s first step)."""

    def __init__(self, ctl: JobController, key: ObjectKey, job: Job, indexed: bool) -> None:
        self.ctl = ctl
        self.key = key
        self.job = job
        self.indexed = indexed
        spec = job.spec
        assert spec is not None
        self.spec = spec
        self.completions = spec.completions
        self.parallelism = spec.parallelism if spec.parallelism is not None else 1
        self.backoff_limit = spec.backoff_limit if spec.backoff_limit is not None else 6
        self.suspended = bool(spec.suspend)
        self.pod_api = ctl.client.api(Pod, key.namespace)
        self.job_api = ctl.client.api(Job, key.namespace)
        self.now: datetime = ctl.clock.now()
        self.requeue_after: float | None = None
        self.error: Exception | None = None
        self.pods: list[Pod] = []
        self.status = job.status or JobStatus()
        self.conditions: list[JobCondition] = []
        self.uncounted_s: list[str] = []
        self.uncounted_f: list[str] = []
        self.in_uncounted: set[str] = set()
        self.expected_rm: frozenset[str] = frozenset()
        self.succeeded_indexes: set[int] = set()
        self.counted = _Counted()
        self.failed = 0
        self.succeeded = 0
        self.backoff = BackoffRecord()
        self.active_pods: list[Pod] = []
        self.active = 0
        self.terminating_pods: list[Pod] = []

    def _active_since(self, stored: datetime) -> datetime:
        return self.ctl.active_since(self.key, self.job.metadata.uid or "", stored)

    def _requeue(self, seconds: float) -> None:
        seconds = max(seconds, 0.0)
        if self.requeue_after is None or seconds < self.requeue_after:
            self.requeue_after = seconds

    def _event(self, type_: str, reason: str, message: str) -> None:
        self.ctl.recorder.event(self.job, type_, reason, message)

    async def _claim(self, candidates: list[Pod]) -> list[Pod]:
        job = self.job
        sel = self.spec.selector
        selector = LabelSelector.from_model(sel) if sel is not None else LabelSelector.nothing()
        manager = ControllerRefManager(
            self.pod_api,
            job,
            _API_VERSION,
            _KIND,
            selector,
            can_adopt=recheck_deletion_timestamp(
                lambda: self.job_api.get(str(job.metadata.name)), job.metadata.uid
            ),
            finalizers=[JOB_TRACKING_FINALIZER],
        )
        return await manager.claim(candidates)

    async def run(self, namespace_pods: list[Pod], *, satisfied: bool) -> Result:
        """Sync the Job, claiming from ``namespace_pods`` (the cached pods of its namespace,
        listed after ``satisfied``, the expectations check, was taken).

        The steps of ``syncJob``: count the newly finished pods; decide whether the Job is
        done, else manage its pods; record the newly finished pods as uncounted (first status
        write); remove their tracking finalizers; move them into the counters and, once
        nothing is left to account for, finish the Job (second status write).
        """
        self.pods = await self._claim(namespace_pods)
        self._count_finished_pods()
        finished, can_finish = await self._finish_or_manage(satisfied)
        to_remove, reached_max_uncounted = self._mark_uncounted(finished)
        self._add_interim_condition(finished)
        job = await self._record_uncounted()
        removed = await self._remove_tracking_finalizers(to_remove)
        await self._count_and_finish(
            job, removed, finished, can_finish=can_finish and not reached_max_uncounted
        )
        return self._result(job, finished)

    # -- the steps of one sync -------------------------------------------------------------

    def _count_finished_pods(self) -> None:
        """Read the status and the claimed pods: the UIDs already uncounted, the finished pods
        this sync newly counts, what the totals will be once everything finished is counted,
        the pod-recreate backoff, and the active and terminating pods."""
        status = self.job.status or JobStatus()
        if status.start_time is None and not self.suspended:
            status = msgspec.structs.replace(status, start_time=self.now)
            self.ctl.note_start(self.key, self.job.metadata.uid or "", self.now)
        self.status = status
        self.conditions = list(status.conditions or ())
        uncounted = status.uncounted_terminated_pods or UncountedTerminatedPods()
        self.uncounted_s = list(uncounted.succeeded or ())
        self.uncounted_f = list(uncounted.failed or ())
        self.in_uncounted = set(self.uncounted_s) | set(self.uncounted_f)
        self.expected_rm = self.ctl.expected_finalizer_removals(self.key)
        completions = self.completions if self.completions is not None else 0
        self.succeeded_indexes = (
            parse_indexes(status.completed_indexes, completions) if self.indexed else set()
        )
        counted = self._count_new(
            self.pods, self.in_uncounted, self.expected_rm, self.succeeded_indexes
        )
        self.counted = counted
        self.failed = (status.failed or 0) + len(self.uncounted_f) + len(counted.failed)
        if self.indexed:
            self.succeeded = len(self.succeeded_indexes)
        else:
            self.succeeded = (
                (status.succeeded or 0) + len(self.uncounted_s) + len(counted.succeeded)
            )
        # kube counts failures the policy ignores into the backoff too
        self.backoff = next_record(
            self.ctl.backoff_for(self.key),
            counted.succeeded,
            [*counted.failed, *counted.ignored],
            self.now,
        )
        self.active_pods = [p for p in self.pods if is_pod_active(p)]
        self.active = len(self.active_pods)
        self.terminating_pods = [p for p in self.pods if is_terminating(p)]

    async def _finish_or_manage(self, satisfied: bool) -> tuple[_Finish | None, bool]:
        """Whether the Job is finished (and why), and whether it may get its terminal
        condition in this sync; a Job not (yet) finished gets its pods managed."""
        finished = self._finish_reason(
            self.conditions, self.counted, self.failed, self.status, self.pods
        )
        if finished is None:
            return await self._manage_until_complete(satisfied), True
        all_deleted = await self._delete_active_if_failed(finished)
        return finished, all_deleted and satisfied

    async def _delete_active_if_failed(self, finished: _Finish) -> bool:
        """A failed Job's active pods are deleted; returns whether all of them were."""
        if finished[0] != "Failed" or not self.active_pods:
            return True
        deleted = await self._delete_pods(self.active_pods)
        all_deleted = deleted == self.active
        self.active -= deleted
        return all_deleted

    async def _manage_until_complete(self, satisfied: bool) -> _Finish | None:
        """Create or delete pods (when the expectations allow and the Job is not being
        deleted); the Job is complete once enough pods succeeded and none is active."""
        manage_called = False
        if satisfied and self.job.metadata.deletion_timestamp is None:
            self.active = await self._manage(
                self.active_pods,
                self.succeeded,
                self.succeeded_indexes,
                self.backoff,
                self.terminating_pods,
            )
            manage_called = True
        if self.completions is None:
            complete = self.succeeded > 0 and self.active == 0
        else:
            complete = self.succeeded >= self.completions and self.active == 0
        if complete:
            return ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
        if manage_called:
            self.status, self.conditions = self._suspend_conditions(self.status, self.conditions)
        return None

    def _mark_uncounted(self, finished: _Finish | None) -> tuple[list[Pod], bool]:
        """Which pods lose their finalizer now, and which UIDs become uncounted: in pod
        order, until uncountedTerminatedPods holds MAX_UNCOUNTED_PODS UIDs (kube's
        reachedMaxUncountedPods); the rest wait for the next sync, and so does finishing.

        Returns:
            The pods whose finalizer goes, and whether the cap was reached.
        """
        failing = finished is not None and finished[0] == "Failed"
        newly_s = {p.metadata.uid or "" for p in self.counted.succeeded}
        newly_f = {p.metadata.uid or "" for p in self.counted.failed}
        to_remove: list[Pod] = []
        for pod in self.pods:
            uid = pod.metadata.uid or ""
            if not has_tracking_finalizer(pod) or uid in self.expected_rm:
                continue
            phase = pod.status.phase if pod.status else None
            done = phase in ("Succeeded", "Failed") or is_failed(pod, self.job)
            # A pod deleted while the Job is suspended goes uncounted; any other pod that
            # is still terminating keeps its finalizer until it reaches a terminal phase
            # (podReplacementPolicy: Failed).
            suspended_delete = self.suspended and is_terminating(pod)
            if done or failing or suspended_delete or uid in self.in_uncounted:
                to_remove.append(pod)
            if uid in newly_s:
                self.uncounted_s.append(uid)
            elif uid in newly_f or (
                failing and is_pod_active(pod) and uid not in self.in_uncounted
            ):
                # every pod still running when the Job fails counts as failed
                self.uncounted_f.append(uid)
            if len(self.uncounted_s) + len(self.uncounted_f) >= MAX_UNCOUNTED_PODS:
                return to_remove, True
        return to_remove, False

    def _add_interim_condition(self, finished: _Finish | None) -> None:
        """``FailureTarget`` / ``SuccessCriteriaMet`` before the terminal condition."""
        if finished is None:
            return
        interim = "FailureTarget" if finished[0] == "Failed" else "SuccessCriteriaMet"
        if _condition(self.conditions, interim) is None:
            self.conditions.append(self._new_condition(interim, finished[1], finished[2]))

    async def _record_uncounted(self) -> Job:
        """Write the pod counts and the newly uncounted UIDs before any finalizer goes."""
        status = msgspec.structs.replace(
            self.status,
            active=self.active,
            ready=sum(1 for p in self.active_pods if is_pod_ready(p)),
            terminating=len(self.terminating_pods),
            completed_indexes=format_indexes(self.succeeded_indexes) if self.indexed else None,
            uncounted_terminated_pods=UncountedTerminatedPods(
                succeeded=self.uncounted_s, failed=self.uncounted_f
            ),
            conditions=self.conditions or None,
        )
        if self.indexed and not status.completed_indexes:
            status = msgspec.structs.replace(status, completed_indexes="")
        job = await self._write_status(self.job, status)
        self.ctl.save_backoff(self.key, self.backoff)
        return job

    async def _remove_tracking_finalizers(self, pods: list[Pod]) -> set[str]:
        """Remove the finalizer of ``pods``; the UIDs it is gone from (a failure is kept as
        the sync's error)."""
        if not pods:
            return set()
        try:
            return await self.ctl.remove_finalizers(self.key, pods)
        except* KcmError as group:
            self.error = group.exceptions[0]
        return set()

    async def _count_and_finish(
        self, job: Job, removed: set[str], finished: _Finish | None, *, can_finish: bool
    ) -> None:
        """Move the uncounted UIDs whose finalizer is gone into ``succeeded``/``failed`` and,
        when nothing is left to account for, add the terminal condition (its event follows
        the successful write, so a conflict never emits one twice)."""
        status, new_succeeded, all_counted = self._counted_status(job, removed)
        finish_event: tuple[str, str, str] | None = None
        if (
            finished is not None
            and can_finish
            and all_counted
            and not self.terminating_pods
            and self.error is None
        ):
            status, finish_event = self._finish(status, finished)
        elif finished is not None:
            self._requeue(1.0)  # pods are still being accounted for; look again soon
        if self.completions is not None and new_succeeded > self.completions:
            self._event(
                "Warning",
                "TooManySucceededPods",
                f"Too many succeeded pods running after completion count reached "
                f"({new_succeeded} > {self.completions})",
            )
        await self._write_status(job, status)
        if finish_event is not None:
            self._event(*finish_event)  # once the condition is written (a conflict: no event)

    def _counted_status(self, job: Job, removed: set[str]) -> tuple[JobStatus, int, bool]:
        """``job``'s status with the UIDs no pod tracks any more counted.

        Returns:
            The status, the new ``succeeded`` count, and whether no UID is left uncounted.
        """
        pending = self.ctl.expected_finalizer_removals(self.key) - removed
        still_tracked = {
            p.metadata.uid
            for p in self.pods
            if has_tracking_finalizer(p) and p.metadata.uid not in removed
        } | set(pending)
        done_s = [u for u in self.uncounted_s if u not in still_tracked]
        done_f = [u for u in self.uncounted_f if u not in still_tracked]
        left_s = [u for u in self.uncounted_s if u in still_tracked]
        left_f = [u for u in self.uncounted_f if u in still_tracked]
        status = job.status or JobStatus()
        new_succeeded = (status.succeeded or 0) + len(done_s)
        if self.indexed:
            new_succeeded = len(self.succeeded_indexes)
        status = msgspec.structs.replace(
            status,
            succeeded=new_succeeded,
            failed=(status.failed or 0) + len(done_f),
            uncounted_terminated_pods=UncountedTerminatedPods(succeeded=left_s, failed=left_f),
        )
        return status, new_succeeded, not left_s and not left_f

    def _finish(
        self, status: JobStatus, finished: _Finish
    ) -> tuple[JobStatus, tuple[str, str, str]]:
        """``status`` with the terminal condition (and completionTime for ``Complete``), and
        the event to record once it is written."""
        conditions = list(status.conditions or ())
        conditions.append(self._new_condition(finished[0], finished[1], finished[2]))
        status = msgspec.structs.replace(status, conditions=conditions)
        if finished[0] == "Complete":
            status = msgspec.structs.replace(status, completion_time=self.now)
            return status, ("Normal", "Completed", "Job completed")
        return status, ("Warning", finished[1], finished[2])

    def _result(self, job: Job, finished: _Finish | None) -> Result:
        """The sync's error, else a requeue for the nearest deadline (or none)."""
        if self.error is not None:
            raise self.error
        if finished is None and not self.suspended:
            deadline = self.spec.active_deadline_seconds
            stored = job.status.start_time if job.status else None
            start = self._active_since(stored) if stored is not None else self.now
            if deadline is not None:
                self._requeue(deadline - (self.now - start).total_seconds())
        if self.requeue_after is not None:
            return Result(requeue_after=self.requeue_after)
        return Result()

    def _count_new(
        self,
        pods: list[Pod],
        in_uncounted: set[str],
        expected_rm: frozenset[str],
        succeeded_indexes: set[int],
    ) -> _Counted:
        """Finished pods still carrying the finalizer that are not yet uncounted."""
        counted = _Counted()
        policy = self.spec.pod_failure_policy
        for pod in pods:
            uid = pod.metadata.uid or ""
            if not has_tracking_finalizer(pod) or uid in in_uncounted or uid in expected_rm:
                continue
            index = completion_index(pod)
            valid = not self.indexed or (
                index is not None and self.completions is not None and index < self.completions
            )
            phase = pod.status.phase if pod.status else None
            if phase == "Succeeded":
                if not valid:
                    continue
                if self.indexed:
                    assert index is not None
                    if index in succeeded_indexes:
                        continue
                    succeeded_indexes.add(index)
                counted.succeeded.append(pod)
            elif is_failed(pod, self.job) and valid:
                if self.suspended and phase != "Failed":
                    continue  # deleted because the Job was suspended: not a failure
                verdict = match_pod_failure_policy(policy, pod)
                if not verdict.counts:
                    counted.ignored.append(pod)
                    continue
                if verdict.action == "FailJob" and counted.fail_job_message is None:
                    counted.fail_job_message = verdict.message
                counted.failed.append(pod)
        return counted

    def _finish_reason(
        self,
        conditions: list[JobCondition],
        counted: _Counted,
        failed: int,
        status: JobStatus,
        pods: list[Pod],
    ) -> _Finish | None:
        target = _condition(conditions, "FailureTarget")
        if target is not None:
            return ("Failed", target.reason or "", target.message or "")
        met = _condition(conditions, "SuccessCriteriaMet")
        if met is not None:
            return ("Complete", met.reason or "", met.message or "")
        if counted.fail_job_message is not None:
            return ("Failed", "PodFailurePolicy", counted.fail_job_message)
        if failed > self.backoff_limit or past_backoff_limit_on_failure(self.job, pods):
            return ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        deadline = self.spec.active_deadline_seconds
        start = status.start_time
        if (
            deadline is not None
            and start is not None
            and not self.suspended
            and (self.now - self._active_since(start)).total_seconds() >= deadline
        ):
            return ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
        return None

    def _new_condition(self, type_: str, reason: str, message: str) -> JobCondition:
        return JobCondition(
            type=type_,
            status="True",
            reason=reason or None,
            message=message or None,
            last_probe_time=self.now,
            last_transition_time=self.now,
        )

    def _suspend_conditions(
        self, status: JobStatus, conditions: list[JobCondition]
    ) -> tuple[JobStatus, list[JobCondition]]:
        existing = next((c for c in conditions if c.type == "Suspended"), None)
        if self.suspended:
            if existing is None or existing.status != "True":
                cond = JobCondition(
                    type="Suspended",
                    status="True",
                    reason="JobSuspended",
                    message="Job suspended",
                    last_probe_time=self.now,
                    last_transition_time=self.now,
                )
                conditions = [c for c in conditions if c.type != "Suspended"] + [cond]
                self._event("Normal", "Suspended", "Job suspended")
        elif existing is not None and existing.status != "False":
            cond = JobCondition(
                type="Suspended",
                status="False",
                reason="JobResumed",
                message="Job resumed",
                last_probe_time=self.now,
                last_transition_time=self.now,
            )
            conditions = [cond if c.type == "Suspended" else c for c in conditions]
            self._event("Normal", "Resumed", "Job resumed")
            # The active deadline counts continuous activity: it restarts on resume.
            status = msgspec.structs.replace(status, start_time=self.now)
            self.ctl.note_start(self.key, self.job.metadata.uid or "", self.now)
        return status, conditions

    async def _write_status(self, job: Job, status: JobStatus) -> Job:
        if _as_stored(status) == _as_stored(job.status or JobStatus()):
            return job
        new = msgspec.structs.replace(job, status=status)
        return await self.job_api.update(job, new, subresource="status")

    # -- managing pods ---------------------------------------------------------------------

    async def _manage(
        self,
        active_pods: list[Pod],
        succeeded: int,
        succeeded_indexes: set[int],
        backoff: BackoffRecord,
        terminating_pods: list[Pod],
    ) -> int:
        """Create or delete pods towards the wanted number of active ones; returns the new
        active count. With ``podReplacementPolicy: Failed`` a terminating pod is replaced
        only once it has failed, so it still takes a place."""
        active = len(active_pods)
        if self.suspended:
            if active_pods:
                active -= await self._delete_pods(active_pods)
            return active
        if self.completions is None:
            want = active if succeeded > 0 else self.parallelism
        else:
            want = max(0, min(self.completions - succeeded, self.parallelism))

        to_delete: list[Pod] = []
        if self.indexed:
            to_delete = self._bad_index_pods(active_pods, succeeded_indexes)
        keep = [p for p in active_pods if p not in to_delete]
        if len(keep) > want:
            extra = sorted(keep, key=deletion_rank)[: len(keep) - want]
            to_delete += extra
        if to_delete:
            to_delete = to_delete[:MAX_POD_CREATE_DELETE_PER_SYNC]
            return active - await self._delete_pods(to_delete)

        waiting = terminating_pods if only_replace_failed_pods(self.job) else []
        if active + len(waiting) < want:
            wait = backoff.remaining(self.ctl.clock.now())
            if wait > 0:
                self._requeue(wait)
                return active
            diff = min(want - active - len(waiting), MAX_POD_CREATE_DELETE_PER_SYNC)
            indexes: list[int | None] = [None] * diff
            if self.indexed:
                taken = {completion_index(p) for p in [*active_pods, *waiting]}
                taken |= succeeded_indexes
                free = (i for i in range(self.completions or 0) if i not in taken)
                indexes = [i for _, i in zip(range(diff), free, strict=False)]
            active += await self._create_pods(indexes)
        return active

    def _bad_index_pods(self, active_pods: list[Pod], succeeded_indexes: set[int]) -> list[Pod]:
        """Active pods of an Indexed Job without a valid index, for an index that already
        succeeded, or duplicating another active pod's index (the newer one goes)."""
        bad: list[Pod] = []
        seen: set[int] = set()
        completions = self.completions or 0

        def created(p: Pod) -> float:
            ts = p.metadata.creation_timestamp
            return ts.timestamp() if ts is not None else 0.0

        for pod in sorted(active_pods, key=created):
            index = completion_index(pod)
            if index is None or index >= completions or index in succeeded_indexes | seen:
                bad.append(pod)
            else:
                seen.add(index)
        return bad

    def _pod_for(self, index: int | None) -> Pod:
        job = self.job
        name = str(job.metadata.name)
        template = self.spec.template
        tmeta = (template.metadata if template is not None else None) or ObjectMeta()
        labels = dict(tmeta.labels or {})
        annotations = dict(tmeta.annotations or {})
        finalizers = list(tmeta.finalizers or ())
        if JOB_TRACKING_FINALIZER not in finalizers:
            finalizers.append(JOB_TRACKING_FINALIZER)
        spec_dict: dict[str, Any] = (
            to_dict(template.spec) if template is not None and template.spec else {}
        )
        generate_name = f"{name}-"
        if index is not None:
            annotations[COMPLETION_INDEX_KEY] = str(index)
            labels[COMPLETION_INDEX_KEY] = str(index)
            generate_name = f"{name}-{index}-"
            spec_dict.setdefault("hostname", f"{name}-{index}")
            env = {
                "name": "JOB_COMPLETION_INDEX",
                "valueFrom": {
                    "fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX_KEY}']"}
                },
            }
            for group in ("initContainers", "containers"):
                for container in spec_dict.get(group) or ():
                    envs = container.setdefault("env", [])
                    if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in envs):
                        envs.append(env)
        return Pod(
            metadata=ObjectMeta(
                generate_name=generate_name,
                namespace=self.key.namespace,
                labels=labels or None,
                annotations=annotations or None,
                finalizers=finalizers,
                owner_references=[new_controller_ref(job, _API_VERSION, _KIND)],
            ),
            spec=from_dict(PodSpec, spec_dict),
        )

    async def _create_pods(self, indexes: list[int | None]) -> int:
        """Create pods in slow-start batches (1, 2, 4, ...), stopping after a batch with an
        error; returns how many were created."""
        ctl, key = self.ctl, self.key
        ctl.expectations.expect_creations(key, len(indexes))
        pending = iter(indexes)  # each call takes the next index before its first await
        errors: list[KcmError] = []

        async def create() -> None:
            try:
                pod = await self.pod_api.create(self._pod_for(next(pending)))
            except KcmError as exc:
                ctl.expectations.creation_observed(key)
                errors.append(exc)
                if not is_namespace_terminating(exc):
                    self._event("Warning", "FailedCreate", f"Error creating: {error_text(exc)}")
                raise
            self._event("Normal", "SuccessfulCreate", f"Created pod: {pod.metadata.name}")

        created, error = await slow_start_batch(len(indexes), create)
        if error is not None and not isinstance(error, KcmError):
            raise error  # a bug, not a refused create
        skipped = len(indexes) - created - len(errors)  # the calls never made
        if skipped:
            ctl.expectations.lower_expectations(key, skipped, 0)
        if errors and not all(is_namespace_terminating(e) for e in errors):
            self.error = errors[0]
        return created

    async def _delete_pods(self, pods: list[Pod]) -> int:
        """Delete ``pods`` (expecting their deletion); returns how many were deleted."""
        ctl, key = self.ctl, self.key
        ctl.expectations.expect_deletions(key, [object_key(p) for p in pods])
        deleted = 0

        async def delete(pod: Pod) -> None:
            nonlocal deleted
            name = str(pod.metadata.name)
            try:
                await self.pod_api.delete(name, preconditions={"uid": pod.metadata.uid})
            except NotFound:
                ctl.expectations.deletion_observed(key, object_key(pod))
                deleted += 1
                return
            except KcmError as exc:
                ctl.expectations.deletion_observed(key, object_key(pod))
                self.error = self.error or exc
                self._event("Warning", "FailedDelete", f"Error deleting: {error_text(exc)}")
                return
            deleted += 1
            self._event("Normal", "SuccessfulDelete", f"Deleted pod: {name}")

        async with anyio.create_task_group() as tg:
            for pod in pods:
                tg.start_soon(delete, pod)
        return deleted


def _as_stored(status: JobStatus) -> JobStatus:
    """``status`` as the server stores it: Go leaves out a zero ``active``, ``succeeded`` or
    ``failed``, an empty ``completedIndexes`` and empty uncounted lists (``omitempty``), so a
    status that differs only there is no change (Go compares its structs, where 0 is 0)."""
    uncounted = status.uncounted_terminated_pods
    if uncounted is not None:
        uncounted = UncountedTerminatedPods(
            succeeded=uncounted.succeeded or None, failed=uncounted.failed or None
        )
    return msgspec.structs.replace(
        status,
        active=status.active or None,
        succeeded=status.succeeded or None,
        failed=status.failed or None,
        completed_indexes=status.completed_indexes or None,
        uncounted_terminated_pods=uncounted,
    )
