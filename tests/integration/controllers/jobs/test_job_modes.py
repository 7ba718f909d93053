"""Job controller: Indexed jobs, suspend/resume, deadlines and the pod failure policy."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from kcm.controllers.job import COMPLETION_INDEX_KEY
from kcm.models.batch_v1 import (
    PodFailurePolicy,
    PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyRule,
)
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


async def wait_condition(env: Env, name: str, type_: str) -> Any:
    async def check() -> bool:
        return condition(await env.job(name), type_) is not None

    await env.eventually(check)
    return condition(await env.job(name), type_)


async def test_indexed_job_one_pod_per_index_and_completed_indexes() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(
            job_manifest("idx", completions=3, parallelism=3, completion_mode="Indexed")
        )
        pods = await wait_active(env, "idx", 3)
        by_index = {(p.metadata.annotations or {})[COMPLETION_INDEX_KEY]: p for p in pods}
        assert sorted(by_index) == ["0", "1", "2"]
        for index, pod in by_index.items():
            assert pod.spec is not None
            assert pod.spec.hostname == f"idx-{index}"
            assert str(pod.metadata.name).startswith(f"idx-{index}-")
            assert (pod.metadata.labels or {})[COMPLETION_INDEX_KEY] == index
            env_names = [e.name for e in pod.spec.containers[0].env or []]
            assert "JOB_COMPLETION_INDEX" in env_names
        await env.set_phase(by_index["1"], "Succeeded")

        async def recorded() -> bool:
            job = await env.job("idx")
            return bool(job.status and job.status.completed_indexes == "1")

        await env.eventually(recorded)
        await env.quiesce()
        active = await env.job_pods("idx", active_only=True)
        assert sorted((p.metadata.annotations or {})[COMPLETION_INDEX_KEY] for p in active) == [
            "0",
            "2",
        ]
        # A failed index is re-created with the same index (after the backoff).
        await env.set_phase(by_index["0"], "Failed")
        await env.eventually(lambda: _failed_is(env, "idx", 1))
        await env.clock.advance(10)
        pods = await wait_active(env, "idx", 2)
        assert sorted((p.metadata.annotations or {})[COMPLETION_INDEX_KEY] for p in pods) == [
            "0",
            "2",
        ]
        for pod in pods:
            await env.set_phase(pod, "Succeeded")
        await wait_condition(env, "idx", "Complete")
        job = await env.job("idx")
        assert job.status is not None
        assert job.status.completed_indexes == "0-2"
        assert job.status.succeeded == 3


async def _failed_is(env: Env, name: str, n: int) -> bool:
    job = await env.job(name)
    return bool(job.status and job.status.failed == n)


async def test_suspend_deletes_active_pods_and_resume_restarts() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("nap", parallelism=2, completions=4))
        await wait_active(env, "nap", 2)

        async def has_start_time() -> bool:
            status = (await env.job("nap")).status
            return status is not None and status.start_time is not None

        await env.eventually(has_start_time)
        started = (await env.job("nap")).status
        assert started is not None
        assert started.start_time is not None
        await env.jobs.patch("nap", {"spec": {"suspend": True}})
        cond = await wait_condition(env, "nap", "Suspended")
        assert cond.reason == "JobSuspended"

        async def gone() -> bool:
            return await env.job_pods("nap") == []

        await env.eventually(gone)
        job = await env.job("nap")
        assert job.status is not None
        assert (job.status.active or 0) == 0
        assert (job.status.failed or 0) == 0  # suspension is not a failure
        assert "Normal Suspended Job suspended" in env.recorder.events
        await env.clock.advance(30)
        await env.jobs.patch("nap", {"spec": {"suspend": False}})
        await wait_active(env, "nap", 2)

        async def resumed() -> bool:
            job = await env.job("nap")
            conds = (job.status.conditions if job.status else None) or []
            return any(c.type == "Suspended" and c.status == "False" for c in conds)

        await env.eventually(resumed)
        job = await env.job("nap")
        assert job.status is not None
        assert job.status.start_time is not None
        assert job.status.start_time > started.start_time  # the deadline clock restarts
        assert "Normal Resumed Job resumed" in env.recorder.events


async def test_created_suspended_has_no_pods_and_no_start_time() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("later", suspend=True))
        await wait_condition(env, "later", "Suspended")
        await env.quiesce()
        assert await env.job_pods("later") == []
        job = await env.job("later")
        assert job.status is not None
        assert job.status.start_time is None


async def test_active_deadline_on_the_fake_clock() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("slow", active_deadline_seconds=30))
        (pod,) = await wait_active(env, "slow", 1)
        await env.set_phase(pod, "Running")
        await env.clock.advance(29)
        await env.quiesce()
        assert condition(await env.job("slow"), "Failed") is None
        assert len(await env.job_pods("slow", active_only=True)) == 1
        await env.clock.advance(1)
        cond = await wait_condition(env, "slow", "Failed")
        assert cond.reason == "DeadlineExceeded"
        assert cond.message == "Job was active longer than specified deadline"
        assert condition(await env.job("slow"), "FailureTarget") is not None

        async def pods_gone() -> bool:
            return await env.job_pods("slow") == []

        await env.eventually(pods_gone)
        job = await env.job("slow")
        assert job.status is not None
        assert job.status.failed == 1
        assert job.status.active is None  # 0: left out (omitempty), as kube-apiserver stores it


class WholeSecondStartTimes(httpx.AsyncBaseTransport):
    """Cuts ``startTime`` values the client writes to whole seconds, as kube-apiserver keeps
    ``metav1.Time`` (the embedded server keeps the fraction the client sent)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method in ("PUT", "PATCH", "POST") and "/jobs" in request.url.path:
            body = json.loads(await request.aread() or b"null")
            request = httpx.Request(
                request.method,
                request.url,
                headers={k: v for k, v in request.headers.items() if k != "content-length"},
                content=json.dumps(_cut(body)).encode(),
            )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _cut(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        if str(value.get("path", "")).endswith("/startTime") and "value" in value:
            return {**value, "value": _cut(value["value"], "startTime")}
        return {k: _cut(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if key == "startTime" and isinstance(value, str) and "." in value:
        return value.split(".")[0] + "Z"
    return value


async def test_active_deadline_never_fires_before_it_has_passed() -> None:
    """``status.startTime`` is stored in whole seconds: a Job started at x.8 s must not fail
    before x.8 + deadline, though every sync after the first reads x.0 back."""
    async with running(job_controller, transport=WholeSecondStartTimes()) as env:
        await env.clock.advance(0.8)
        began = env.clock.now()
        await env.jobs.create(job_manifest("slow", active_deadline_seconds=30))
        (pod,) = await wait_active(env, "slow", 1)

        async def start_recorded() -> bool:  # the status write may land after the pod
            job = await env.job("slow")
            return job.status is not None and job.status.start_time is not None

        await env.eventually(start_recorded)
        job = await env.job("slow")
        assert job.status is not None
        assert job.status.start_time == began.replace(microsecond=0)
        await env.set_phase(pod, "Running")  # more syncs, each reading the cut startTime
        await env.clock.advance(29.5)  # 30.3 s after x.0, 29.5 s after the start
        await env.quiesce()
        assert condition(await env.job("slow"), "Failed") is None
        assert condition(await env.job("slow"), "FailureTarget") is None
        await env.clock.advance(0.5)  # 30.0 s after the start
        cond = await wait_condition(env, "slow", "Failed")
        assert cond.reason == "DeadlineExceeded"


async def test_after_a_restart_the_deadline_counts_from_the_end_of_the_cut_second() -> None:
    """A controller that did not set ``startTime`` cannot know where in that second the Job
    started, so it waits for the end of the second: at most 1 s late, never early."""
    async with cluster(WholeSecondStartTimes()) as env:
        async with started(env, job_controller):
            await env.clock.advance(0.8)
            await env.jobs.create(job_manifest("slow", active_deadline_seconds=30))
            await wait_active(env, "slow", 1)
        async with started(env, job_controller):  # a new controller process
            await env.clock.advance(29.7)  # x.0 + 30.5: x.8 + 29.7
            await env.quiesce()
            assert condition(await env.job("slow"), "Failed") is None
            await env.clock.advance(0.5)  # x.0 + 31
            cond = await wait_condition(env, "slow", "Failed")
            assert cond.reason == "DeadlineExceeded"


def _policy(*rules: PodFailurePolicyRule) -> PodFailurePolicy:
    return PodFailurePolicy(rules=list(rules))


async def test_pod_failure_policy_fail_job_and_ignore() -> None:
    rules = _policy(
        PodFailurePolicyRule(
            action="FailJob",
            on_exit_codes=PodFailurePolicyOnExitCodesRequirement(operator="In", values=[42]),
        ),
        PodFailurePolicyRule(
            action="Ignore",
            on_pod_conditions=[{"type": "DisruptionTarget", "status": "True"}],  # type: ignore[list-item]
        ),
    )
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("pfp", backoff_limit=0, pod_failure_policy=rules))
        (pod,) = await wait_active(env, "pfp", 1)
        # A disruption is ignored: not counted, so backoffLimit 0 does not fail the Job; the
        # replacement still waits out the pod-recreate backoff (kube counts ignored
        # failures into its backoff record).
        await env.set_phase(
            pod,
            "Failed",
            conditions=[{"type": "DisruptionTarget", "status": "True"}],
        )
        await env.quiesce()
        assert await env.job_pods("pfp", active_only=True) == []
        await env.clock.advance(10)
        (second,) = await wait_active(env, "pfp", 1)
        assert second.metadata.name != pod.metadata.name
        assert condition(await env.job("pfp"), "Failed") is None
        await env.set_phase(
            second,
            "Failed",
            containerStatuses=[
                {
                    "name": "main",
                    "image": "busybox",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 42}},
                }
            ],
        )
        cond = await wait_condition(env, "pfp", "Failed")
        assert cond.reason == "PodFailurePolicy"
        assert "exit code 42" in cond.message
        assert "FailJob rule at index 0" in cond.message
        job = await env.job("pfp")
        assert job.status is not None
        assert job.status.failed == 1


async def test_replacement_policy_failed_waits_for_a_deleted_pod_to_fail() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("patient", pod_replacement_policy="Failed"))
        (pod,) = await wait_active(env, "patient", 1)
        await env.set_phase(pod, "Running")
        await env.pods.delete(str(pod.metadata.name))  # stays: the tracking finalizer
        await env.quiesce()
        await env.clock.advance(60)
        await env.quiesce()
        assert len(await env.job_pods("patient")) == 1  # no replacement while terminating
        job = await env.job("patient")
        assert (job.status.failed if job.status else 0) in (0, None)
        await env.set_phase(pod, "Failed")
        await env.eventually(lambda: _failed_is(env, "patient", 1))
        await env.clock.advance(10)  # backoff after one failure
        (replacement,) = await wait_active(env, "patient", 1)
        assert replacement.metadata.name != pod.metadata.name
