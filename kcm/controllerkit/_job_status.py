"""Whether a Job has finished, read from its conditions (``IsJobFinished``).

The Job controller stops touching a finished Job; the CronJob controller counts it as done
and the TTL-after-finished controller starts its clock from the condition's time.
"""

from __future__ import annotations

from kcm.models.batch_v1 import Job, JobCondition

__all__ = ["finished_condition", "is_finished"]


def finished_condition(job: Job) -> JobCondition | None:
    """The Job's first True ``Complete`` or ``Failed`` condition, or None while it runs."""
    for cond in (job.status.conditions if job.status is not None else None) or ():
        if cond.type in ("Complete", "Failed") and cond.status == "True":
            return cond
    return None


def is_finished(job: Job) -> bool:
    """The Job has a True ``Complete`` or ``Failed`` condition (it is never touched again)."""
    return finished_condition(job) is not None
