"""Job backoff: restarts under restartPolicy OnFailure, a backoff timed from the pods' finish
times that a freshly started controller honours, and the cap on uncounted pods per sync."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import anyio
import pytest

import kcm.controllers.job._sync as job_sync
from kcm.controllers.job import JOB_TRACKING_FINALIZER, MAX_UNCOUNTED_PODS
from kcm.models import format_time
from tests.integration.controllers.jobs.jobs_harness import (
    Env,
    cluster,
    condition,
    job_manifest,
    running,
    started,
)

from .test_job_basic import job_controller, wait_active

pytestmark = pytest.mark.anyio


def container_status(*, restarts: int = 0, finished_at: datetime | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {"running": {}}
    if finished_at is not None:
        state = {"terminated": {"exitCode": 1, "finishedAt": format_time(finished_at)}}
    return {
        "name": "main",
        "image": "busybox",
        "imageID": "",
        "ready": finished_at is None,
        "restartCount": restarts,
        "state": state,
    }


async def failed_count(env: Env, name: str) -> int:
    job = await env.job(name)
    return (job.status.failed or 0) if job.status else 0


async def test_on_failure_container_restarts_reaching_the_backoff_limit_fail_the_job() -> None:
    """restartPolicy OnFailure: no pod fails, its containers restart; once the restarts of
    the running pods add up to backoffLimit the Job fails with BackoffLimitExceeded and the
    running pod is deleted and counted as failed."""
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("restarts", restart_policy="OnFailure", backoff_limit=3))
        (pod,) = await wait_active(env, "restarts", 1)
        await env.set_phase(pod, "Running", containerStatuses=[container_status(restarts=2)])
        await env.quiesce()
        job = await env.job("restarts")
        assert condition(job, "Failed") is None  # 2 restarts < 3
        await env.set_phase(pod, "Running", containerStatuses=[container_status(restarts=3)])

        async def failed() -> bool:
            return condition(await env.job("restarts"), "Failed") is not None

        await env.eventually(failed)
        job = await env.job("restarts")
        cond = condition(job, "Failed")
        assert (cond.reason, cond.message) == (
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        )
        assert job.status is not None
        assert (job.status.failed, job.status.active) == (1, None)  # Go leaves out a zero count
        assert await env.job_pods("restarts", active_only=True) == []
        assert any("BackoffLimitExceeded" in e for e in env.recorder.events)


async def test_a_fresh_controller_waits_only_what_is_left_of_the_backoff() -> None:
    """A pod fails while no controller runs; one started 4 s later times the 10 s backoff
    from the pod's finish time: the replacement comes 6 s after it starts, not 10 s."""
    async with cluster() as env:
        async with started(env, job_controller):
            await env.jobs.create(job_manifest("flaky", backoff_limit=6))
            (pod,) = await wait_active(env, "flaky", 1)
            await env.quiesce()
        finished = env.clock.now()
        await env.set_phase(
            pod, "Failed", containerStatuses=[container_status(finished_at=finished)]
        )
        await env.clock.advance(4)
        async with started(env, job_controller):

            async def counted() -> bool:
                return await failed_count(env, "flaky") == 1

            await env.eventually(counted)
            await env.quiesce()
            assert await env.job_pods("flaky", active_only=True) == []
            await env.clock.advance(5.5)  # 9.5 s after the failure
            await env.quiesce()
            assert await env.job_pods("flaky", active_only=True) == []
            await env.clock.advance(0.5)  # 10 s after the failure
            (replacement,) = await wait_active(env, "flaky", 1)
            assert replacement.metadata.name != pod.metadata.name


async def test_uncounted_pods_are_capped_per_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """12 pods finish while no controller runs. With the cap lowered to 5 (Kubernetes: 500),
    no status write ever lists more than 5 uncounted UIDs and no sync removes more than 5
    finalizers; the Job still completes with every pod counted once."""
    assert MAX_UNCOUNTED_PODS == 500
    monkeypatch.setattr(job_sync, "MAX_UNCOUNTED_PODS", 5)
    async with cluster() as env:
        async with started(env, job_controller):
            await env.jobs.create(job_manifest("wide", completions=12, parallelism=12))
            pods = await wait_active(env, "wide", 12)
            await env.quiesce()
        for pod in pods:
            await env.set_phase(pod, "Succeeded")
        uncounted: list[int] = []
        rv = (await env.jobs.list()).metadata.resource_version
        async with anyio.create_task_group() as tg:

            async def record() -> None:
                async with env.jobs.watch(resource_version=rv) as events:
                    async for event in events:
                        status = event.object.status
                        u = status.uncounted_terminated_pods if status else None
                        if u is not None:
                            uncounted.append(len(u.succeeded or ()) + len(u.failed or ()))

            tg.start_soon(record)
            async with started(env, job_controller):

                async def complete() -> bool:
                    return condition(await env.job("wide"), "Complete") is not None

                await env.eventually(complete)
                await env.quiesce()
            tg.cancel_scope.cancel()
        assert uncounted, "no status write seen"
        assert max(uncounted) == 5, uncounted  # the cap was reached, never passed
        job = await env.job("wide")
        assert job.status is not None
        assert (job.status.succeeded, job.status.failed or 0) == (12, 0)
        assert all(
            JOB_TRACKING_FINALIZER not in (p.metadata.finalizers or ())
            for p in await env.job_pods("wide")
        )
        assert sum(e == "Normal Completed Job completed" for e in env.recorder.events) == 1
