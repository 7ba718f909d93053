"""The pod-recreate backoff of the Job controller (kube's ``backoffRecord`` store).

A record per Job holds the failures since the last success and when the last of them
finished. It is derived from the pods' own finish times (the Ready condition turning False,
the containers' ``terminated.finishedAt``, or the deletion time), not from when the
controller noticed them: a controller that starts after a pod failed, or notices late,
waits only what is left of the delay. The delay is 10 s doubling per failure, capped at
6 minutes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from kcm.models.core_v1 import Pod

__all__ = ["DEFAULT_BACKOFF", "MAX_BACKOFF", "BackoffRecord", "finish_time", "next_record"]

DEFAULT_BACKOFF = 10.0
"""Seconds before the first replacement of a failed pod; doubles per consecutive failure."""
MAX_BACKOFF = 360.0
"""Cap of the pod-recreate backoff (6 minutes)."""


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    """Consecutive pod failures since the last success and when the last one finished."""

    failures: int = 0
    last_failure: datetime | None = None

    def delay(self) -> float:
        """The backoff the failure count calls for (0 without failures)."""
        if self.failures <= 0:
            return 0.0
        return min(DEFAULT_BACKOFF * 2.0 ** min(self.failures - 1, 30), MAX_BACKOFF)

    def remaining(self, now: datetime) -> float:
        """Seconds still to wait at ``now`` before a replacement pod may be created."""
        if self.failures <= 0 or self.last_failure is None:
            return 0.0
        elapsed = (now - self.last_failure).total_seconds()
        delay = self.delay()
        return 0.0 if delay < elapsed else delay - elapsed


def _ready_false_time(pod: Pod) -> datetime | None:
    status = pod.status
    for cond in (status.conditions if status is not None else None) or ():
        if cond.type == "Ready":
            if cond.status == "False" and cond.last_transition_time is not None:
                return cond.last_transition_time
            return None
    return None


def _containers_finish_time(pod: Pod) -> datetime | None:
    status = pod.status
    latest: datetime | None = None
    for cs in (status.container_statuses if status is not None else None) or ():
        terminated = cs.state.terminated if cs.state is not None else None
        if terminated is None or terminated.finished_at is None:
            return None  # a container still running (or unknown): no finish time
        if latest is None or terminated.finished_at > latest:
            latest = terminated.finished_at
    return latest


def _deletion_time(pod: Pod) -> datetime | None:
    deleted = pod.metadata.deletion_timestamp
    if deleted is None:
        return None
    return deleted - timedelta(seconds=pod.metadata.deletion_grace_period_seconds or 0)


def finish_time(pod: Pod, now: datetime) -> datetime:
    """When ``pod`` finished (kube's ``getFinishedTime``): its Ready condition's turn to
    False, else the latest ``terminated.finishedAt`` of its containers (all must have
    one), else its deletion time less the grace period, else ``now``."""
    for found in (_ready_false_time(pod), _containers_finish_time(pod), _deletion_time(pod)):
        if found is not None:
            return found
    return now


def next_record(
    record: BackoffRecord,
    new_succeeded: Sequence[Pod],
    new_failed: Sequence[Pod],
    now: datetime,
) -> BackoffRecord:
    """The record after one sync counted these newly finished pods (kube's
    ``newBackoffRecord``): failures add up; a success resets the count to the failures
    that finished after the last success."""
    if not new_failed:
        return BackoffRecord() if new_succeeded else record
    failed_times = sorted(finish_time(p, now) for p in new_failed)
    if not new_succeeded:
        return BackoffRecord(record.failures + len(failed_times), failed_times[-1])
    last_success = max(finish_time(p, now) for p in new_succeeded)
    after = [t for t in failed_times if t > last_success]
    if not after:
        return BackoffRecord()
    return BackoffRecord(len(after), after[-1])
