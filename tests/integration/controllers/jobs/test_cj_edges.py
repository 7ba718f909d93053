"""CronJob controller: missed schedules, starting deadlines and vanished Jobs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers import cronjob as cronjob_pkg
from kcm.controllers import job as job_pkg
from kcm.controllers import ttlafterfinished
from kcm.controllers.cronjob import job_name_for
from kcm.errors import NotFound
from kcm.models import format_time
from kcm.models.batch_v1 import CronJob, Job
from kcm.models.core_v1 import Namespace, Pod
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Manager
from kcm.testing import FakeClock, client_config_for, eventually
from tests.integration.controllers.jobs.jobs_harness import NS, running

from .test_cj_schedule import _has_event, cj_controller, cronjob, jobs_of, wait_jobs

pytestmark = pytest.mark.anyio


async def test_too_many_missed_times_warns_and_starts_only_the_latest() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("late", suspend=True))
        # Pretend the last run was three hours ago (180 missed minutes).
        past = env.clock.now() - timedelta(hours=3)
        await api.patch_status("late", {"status": {"lastScheduleTime": format_time(past)}})
        await env.quiesce()
        await api.patch("late", {"spec": {"suspend": False}})
        (job,) = await wait_jobs(env, "late", 1)
        now = env.clock.now().replace(second=0, microsecond=0)
        assert job.metadata.name == job_name_for("late", now)
        await env.eventually(lambda: _has_event(env, "TooManyMissedTimes"))


async def test_starting_deadline_skips_a_start_time_that_is_too_old() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        # Hourly; 10 minutes past the hour the 10 s starting deadline has long passed.
        await api.create(cronjob("strict", "0 * * * *", starting_deadline_seconds=10, suspend=True))
        await env.clock.advance(3600 + 600)
        await api.patch("strict", {"spec": {"suspend": False}})
        await env.quiesce()
        assert await jobs_of(env, "strict") == []
        # The next hour starts on time.
        await env.clock.advance(3000.2)
        (job,) = await wait_jobs(env, "strict", 1)
        assert job.metadata.name == job_name_for("strict", datetime(2026, 1, 1, 2, tzinfo=UTC))


async def test_an_active_job_that_disappeared_is_dropped() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("lost", concurrency_policy="Forbid"))
        await env.clock.advance(60.2)
        (job,) = await wait_jobs(env, "lost", 1)

        async def listed() -> bool:
            cj = await api.get("lost")
            return bool(cj.status and cj.status.active)

        await env.eventually(listed)
        await env.jobs.delete(str(job.metadata.name), propagation_policy="Background")

        async def dropped() -> bool:
            cj = await api.get("lost")
            return not (cj.status and cj.status.active)

        await env.eventually(dropped)
        assert any(e.startswith("Normal MissingJob") for e in env.recorder.events)
        # Forbid no longer blocks: the next minute starts a new Job.
        await env.clock.advance(60)
        (new,) = await wait_jobs(env, "lost", 1)
        assert new.metadata.name != job.metadata.name


async def test_cronjob_job_and_ttl_controllers_together_under_a_manager() -> None:
    """CronJob → Job → pod → Complete → lastSuccessfulTime → TTL clean-up, all via
    ``add_to_manager`` on one fake clock."""
    clock = FakeClock()
    async with ApiServer(clock=clock) as server, ApiClient(client_config_for(server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=5)
        for pkg in (cronjob_pkg, job_pkg, ttlafterfinished):
            pkg.add_to_manager(manager)
        cronjobs = client.api(CronJob, NS)
        jobs = client.api(Job, NS)
        pods = client.api(Pod, NS)
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            template = cronjob("nightly")
            assert template.spec is not None
            assert template.spec.job_template is not None
            assert template.spec.job_template.spec is not None
            job_spec = msgspec.structs.replace(
                template.spec.job_template.spec, ttl_seconds_after_finished=30
            )
            await cronjobs.create(
                msgspec.structs.replace(
                    template,
                    spec=msgspec.structs.replace(
                        template.spec,
                        job_template=msgspec.structs.replace(
                            template.spec.job_template, spec=job_spec
                        ),
                    ),
                )
            )
            await clock.advance(60.2)
            found: list[Pod] = []

            async def pod_running() -> bool:
                found[:] = (await pods.list(label_selector="app=nightly")).items
                return bool(found)

            await eventually(pod_running)
            job_name = (found[0].metadata.labels or {})["job-name"]
            await pods.patch_status(str(found[0].metadata.name), {"status": {"phase": "Succeeded"}})

            async def succeeded() -> bool:
                cj = await cronjobs.get("nightly")
                return bool(cj.status and cj.status.last_successful_time and not cj.status.active)

            await eventually(succeeded)
            await clock.advance(30)

            async def cleaned_up() -> bool:
                try:
                    job = await jobs.get(job_name)
                except NotFound:
                    return True
                return job.metadata.deletion_timestamp is not None  # foreground: GC finishes

            await eventually(cleaned_up)
            tg.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                await clock.advance(31)


async def test_a_terminating_namespace_is_not_reported_or_retried() -> None:
    """Creates refused because the namespace is terminating (cause NamespaceTerminating):
    no FailedCreate event, no failed reconcile to retry, no lastScheduleTime; the next try
    is the next start time."""
    async with running(cj_controller) as env:
        namespaces = env.client.api(Namespace)
        await namespaces.create(Namespace(metadata=ObjectMeta(name="doomed")))
        api = env.client.api(CronJob, "doomed")
        manifest = cronjob("tick")
        await api.create(
            msgspec.structs.replace(
                manifest, metadata=msgspec.structs.replace(manifest.metadata, namespace="doomed")
            )
        )
        await env.quiesce()
        await namespaces.delete("doomed")  # stays Terminating: no namespace controller runs
        await env.quiesce()
        controller = env.built[0].controller
        for _ in range(3):  # three start times come and go
            await env.clock.advance(60)
            await env.quiesce()
        assert (await env.client.api(Job, "doomed").list()).items == []
        assert not [e for e in env.recorder.events if e.startswith("Warning")]
        assert controller.reconcile_counts["error"] == 0
        cj = await api.get("tick")
        assert cj.status is None or (cj.status.last_schedule_time, cj.status.active) == (
            None,
            None,
        )
