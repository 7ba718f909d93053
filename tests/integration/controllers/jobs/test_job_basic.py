"""Job controller against the embedded API server; the test plays the kubelet."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.controllers.job import JOB_TRACKING_FINALIZER, JobController
from tests.integration.controllers.jobs.jobs_harness import Env, condition, job_manifest, running

pytestmark = pytest.mark.anyio


def job_controller(client: Any, factory: Any, clock: Any, recorder: Any) -> JobController:
    return JobController(client, factory, recorder=recorder, clock=clock)


async def wait_active(env: Env, name: str, n: int) -> list[Any]:
    pods: list[Any] = []

    async def check() -> bool:
        nonlocal pods
        pods = await env.job_pods(name, active_only=True)
        return len(pods) == n

    await env.eventually(check)
    return pods


async def test_completions_and_parallelism_complete_with_exactly_five() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("work", completions=5, parallelism=3))
        finished: set[str] = set()
        while len(finished) < 5:
            pods = await wait_active(env, "work", min(3, 5 - len(finished)))
            assert all(JOB_TRACKING_FINALIZER in (p.metadata.finalizers or []) for p in pods)
            pod = pods[0]
            await env.set_phase(pod, "Succeeded")
            finished.add(str(pod.metadata.name))

            async def counted(n: int = len(finished)) -> bool:
                job = await env.job("work")
                return (job.status.succeeded or 0) == n if job.status else False

            await env.eventually(counted)

        async def complete() -> bool:
            return condition(await env.job("work"), "Complete") is not None

        await env.eventually(complete)
        job = await env.job("work")
        assert job.status is not None
        assert job.status.succeeded == 5
        assert (job.status.failed or 0) == 0
        assert job.status.active is None  # 0: left out (omitempty), as kube-apiserver stores it
        assert job.status.completion_time is not None
        assert condition(job, "SuccessCriteriaMet") is not None
        uncounted = job.status.uncounted_terminated_pods
        assert uncounted is None or not (uncounted.succeeded or uncounted.failed)
        pods = await env.job_pods("work")
        assert len(pods) == 5
        assert all(JOB_TRACKING_FINALIZER not in (p.metadata.finalizers or []) for p in pods)
        assert "Normal Completed Job completed" in env.recorder.events


async def test_backoff_limit_two_fails_after_three_failures_with_backoff() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("flaky", backoff_limit=2))
        for failures, expected_delay in enumerate((10.0, 20.0, None), start=1):
            (pod,) = await wait_active(env, "flaky", 1)
            await env.set_phase(pod, "Failed")

            async def counted(n: int = failures) -> bool:
                job = await env.job("flaky")
                return bool(job.status and job.status.failed == n)

            await env.eventually(counted)
            if expected_delay is None:
                break
            # The replacement waits out the backoff on the fake clock: not a moment earlier.
            await env.clock.advance(expected_delay - 0.5)
            await env.quiesce()
            assert await env.job_pods("flaky", active_only=True) == []
            await env.clock.advance(0.5)

        async def failed() -> bool:
            return condition(await env.job("flaky"), "Failed") is not None

        await env.eventually(failed)
        job = await env.job("flaky")
        cond = condition(job, "Failed")
        assert cond.reason == "BackoffLimitExceeded"
        assert cond.message == "Job has reached the specified backoff limit"
        assert job.status is not None
        assert job.status.failed == 3
        await env.clock.advance(400)
        await env.quiesce()
        assert len(await env.job_pods("flaky")) == 3  # no 4th pod
        assert any("BackoffLimitExceeded" in e for e in env.recorder.events)
