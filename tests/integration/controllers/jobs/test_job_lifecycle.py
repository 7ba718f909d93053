"""Job controller: scaling, work-queue Jobs, finalizer clean-up, and the manager wiring."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers import job as job_pkg
from kcm.controllers import ttlafterfinished
from kcm.controllers.job import JOB_TRACKING_FINALIZER
from kcm.errors import NotFound
from kcm.models.batch_v1 import Job
from kcm.models.core_v1 import Container, Event, Namespace, Pod, PodSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Manager
from kcm.testing import FakeClock, client_config_for, eventually
from tests.integration.controllers.jobs.jobs_harness import (
    NS,
    Env,
    condition,
    job_manifest,
    running,
)

from .test_job_basic import job_controller, wait_active

pytestmark = pytest.mark.anyio


async def test_lowering_parallelism_deletes_extra_pods() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("wide", parallelism=3, completions=6))
        pods = await wait_active(env, "wide", 3)
        await env.set_phase(pods[0], "Running")
        await env.jobs.patch("wide", {"spec": {"parallelism": 1}})
        (left,) = await wait_active(env, "wide", 1)
        assert left.metadata.name == pods[0].metadata.name  # running pods are kept first
        await env.quiesce()
        assert len(await env.job_pods("wide", active_only=True)) == 1
        assert sum("SuccessfulDelete" in e for e in env.recorder.events) == 2


async def test_work_queue_job_completes_when_all_pods_stop() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("queue", parallelism=2, completions=None))
        first, second = await wait_active(env, "queue", 2)
        await env.set_phase(first, "Succeeded")

        async def one_done() -> bool:
            job = await env.job("queue")
            return bool(job.status and job.status.succeeded == 1)

        await env.eventually(one_done)
        await env.quiesce()
        # The other pod keeps running and is not replaced; no new pods either.
        active = await env.job_pods("queue", active_only=True)
        assert [p.metadata.name for p in active] == [second.metadata.name]
        assert condition(await env.job("queue"), "Complete") is None
        await env.set_phase(second, "Succeeded")

        async def complete() -> bool:
            return condition(await env.job("queue"), "Complete") is not None

        await env.eventually(complete)
        job = await env.job("queue")
        assert job.status is not None
        assert job.status.succeeded == 2
        assert len(await env.job_pods("queue")) == 2


async def _finalizers(env: Env, name: str) -> list[str] | None:
    try:
        pod = await env.pods.get(name)
    except NotFound:
        return None
    return list(pod.metadata.finalizers or [])


async def test_deleted_job_and_orphaned_pods_lose_the_tracking_finalizer() -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("gone", parallelism=2, completions=2))
        pods = await wait_active(env, "gone", 2)
        await env.jobs.delete("gone", propagation_policy="Background")

        async def released() -> bool:
            for pod in pods:
                fins = await _finalizers(env, str(pod.metadata.name))
                if fins is not None and JOB_TRACKING_FINALIZER in fins:
                    return False
            return True

        await env.eventually(released)
        # A pod that carries the finalizer but has no Job at all (an orphan) loses it too.
        stray = Pod(
            metadata=ObjectMeta(name="stray", namespace=NS, finalizers=[JOB_TRACKING_FINALIZER]),
            spec=PodSpec(containers=[Container(name="c", image="busybox")]),
        )
        await env.pods.create(stray)

        async def stray_released() -> bool:
            return await _finalizers(env, "stray") == []

        await env.eventually(stray_released)


async def test_add_to_manager_runs_job_and_ttl_controllers_with_real_events() -> None:
    clock = FakeClock()
    async with ApiServer(clock=clock) as server, ApiClient(client_config_for(server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=5)
        job_pkg.add_to_manager(manager, workers=2)
        ttlafterfinished.add_to_manager(manager)
        jobs = client.api(Job, NS)
        pods = client.api(Pod, NS)
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            await jobs.create(job_manifest("managed", ttl_seconds_after_finished=5))
            found: list[Pod] = []

            async def pod_created() -> bool:
                found[:] = (await pods.list(label_selector="job-name=managed")).items
                return bool(found)

            await eventually(pod_created)
            await pods.patch_status(str(found[0].metadata.name), {"status": {"phase": "Succeeded"}})

            async def complete() -> bool:
                return condition(await jobs.get("managed"), "Complete") is not None

            async def event_written() -> bool:
                events = (await client.api(Event, NS).list()).items
                return any(e.reason == "SuccessfulCreate" for e in events)

            await eventually(complete)
            await eventually(event_written)
            await clock.advance(5)

            async def deleted() -> bool:
                try:
                    job: Any = await jobs.get("managed")
                except NotFound:
                    return True
                return job.metadata.deletion_timestamp is not None

            await eventually(deleted)
            tg.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                await clock.advance(31)


@pytest.mark.parametrize("failures", [1, 3, 6])
async def test_api_failures_mid_tracking_still_count_each_pod_once(failures: int) -> None:
    async with running(job_controller) as env:
        await env.jobs.create(job_manifest("sturdy", parallelism=2, completions=2))
        pods = await wait_active(env, "sturdy", 2)
        for pod in pods:
            await env.set_phase(pod, "Succeeded")
        env.server.faults.fail_next(failures, code=500)

        async def complete() -> bool:
            return condition(await env.job("sturdy"), "Complete") is not None

        await env.eventually(complete, tick=0.2, limit=30)
        job = await env.job("sturdy")
        assert job.status is not None
        assert job.status.succeeded == 2
        assert (job.status.failed or 0) == 0
        for pod in await env.job_pods("sturdy"):
            assert JOB_TRACKING_FINALIZER not in (pod.metadata.finalizers or [])


async def test_pods_refused_by_a_terminating_namespace_are_not_reported_or_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Pod creates refused because the namespace is terminating (cause NamespaceTerminating):
    no FailedCreate event and no failed reconcile to retry (a Conflict from a stale cache
    read is retried quietly and is not what this is about)."""
    async with running(job_controller) as env:
        namespaces = env.client.api(Namespace)
        await namespaces.create(Namespace(metadata=ObjectMeta(name="doomed")))
        manifest = job_manifest("late", suspend=True)
        await env.client.api(Job, "doomed").create(
            msgspec.structs.replace(
                manifest, metadata=msgspec.structs.replace(manifest.metadata, namespace="doomed")
            )
        )
        await env.quiesce()
        await namespaces.delete("doomed")  # stays Terminating: no namespace controller runs
        await env.quiesce()
        await env.client.api(Job, "doomed").patch("late", {"spec": {"suspend": False}})
        await env.quiesce()
        assert (await env.client.api(Pod, "doomed").list()).items == []
        assert any("Resumed" in e for e in env.recorder.events)  # the sync did run
        assert not [e for e in env.recorder.events if e.startswith("Warning")]
        failed = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert failed == []


async def test_refused_pod_creates_stop_the_slow_start_and_are_retried() -> None:
    """Pod creates the server refuses (the template names a ServiceAccount that does not
    exist: the Job itself is valid, its pods are refused by ServiceAccount admission): each
    sync stops after the first batch of one (one FailedCreate per failed sync, not one per
    wanted pod) and does not wait for the creations it never made, so the retry tries
    again."""
    async with running(job_controller) as env:
        manifest = job_manifest("refused", parallelism=4, completions=4)
        assert manifest.spec is not None
        assert manifest.spec.template is not None
        assert manifest.spec.template.spec is not None
        pod_spec = msgspec.structs.replace(
            manifest.spec.template.spec, service_account_name="missing"
        )
        template = msgspec.structs.replace(manifest.spec.template, spec=pod_spec)
        spec = msgspec.structs.replace(manifest.spec, template=template)
        await env.jobs.create(msgspec.structs.replace(manifest, spec=spec))
        await env.quiesce()
        controller = env.built[0].controller

        def failed_creates() -> int:
            return sum("FailedCreate" in e for e in env.recorder.events)

        assert not [e for e in env.recorder.events if "SuccessfulCreate" in e]
        first = failed_creates()
        assert first >= 1
        assert first == controller.reconcile_counts["error"]
        await env.clock.advance(1)  # past the rate limiter's backoff
        await env.quiesce()
        assert failed_creates() > first
        assert failed_creates() == controller.reconcile_counts["error"]
        assert await env.job_pods("refused") == []
