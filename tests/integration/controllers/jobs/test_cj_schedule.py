"""CronJob controller against the embedded API server on a fake clock (wall time starts at
2026-01-01T00:00:00Z)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kcm.controllers.cronjob import (
    SCHEDULED_TIMESTAMP_ANNOTATION,
    CronJobController,
    job_name_for,
)
from kcm.models import format_time
from kcm.models.batch_v1 import CronJob, CronJobSpec, Job, JobTemplateSpec
from kcm.models.meta_v1 import ObjectMeta
from tests.integration.controllers.jobs.jobs_harness import NS, Env, job_manifest, running

pytestmark = pytest.mark.anyio

START = datetime(2026, 1, 1, tzinfo=UTC)


def cj_controller(client: Any, factory: Any, clock: Any, recorder: Any) -> CronJobController:
    # CronJobs without spec.timeZone run in the controller's zone: UTC here, whatever the
    # machine's local zone is
    return CronJobController(client, factory, recorder=recorder, clock=clock, time_zone=UTC)


def cj_controller_in(zone: str) -> Any:
    def make(client: Any, factory: Any, clock: Any, recorder: Any) -> CronJobController:
        return CronJobController(
            client, factory, recorder=recorder, clock=clock, time_zone=ZoneInfo(zone)
        )

    return make


def cronjob(name: str, schedule: str = "* * * * *", **spec: Any) -> CronJob:
    template = job_manifest(name)
    return CronJob(
        metadata=ObjectMeta(name=name, namespace=NS),
        spec=CronJobSpec(
            schedule=schedule,
            job_template=JobTemplateSpec(
                metadata=ObjectMeta(labels={"cron": name}), spec=template.spec
            ),
            **spec,
        ),
    )


async def jobs_of(env: Env, cj: str) -> list[Job]:
    jobs = (await env.jobs.list(label_selector=f"cron={cj}")).items
    return sorted(
        (j for j in jobs if j.metadata.deletion_timestamp is None),
        key=lambda j: str(j.metadata.name),
    )


async def wait_jobs(env: Env, cj: str, n: int) -> list[Job]:
    result: list[Job] = []

    async def check() -> bool:
        nonlocal result
        result = await jobs_of(env, cj)
        return len(result) == n

    await env.eventually(check)
    return result


async def complete(env: Env, job: Job, *, at: datetime | None = None) -> None:
    stamp = format_time(at or env.clock.now())
    await env.jobs.patch_status(
        str(job.metadata.name),
        {
            "status": {
                "startTime": stamp,
                "completionTime": stamp,
                "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": stamp}],
            }
        },
    )


async def test_every_minute_creates_a_named_job_with_status() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("tick"))
        await env.quiesce()
        assert await jobs_of(env, "tick") == []
        await env.clock.advance(59)
        await env.quiesce()
        assert await jobs_of(env, "tick") == []
        await env.clock.advance(1.2)
        (job,) = await wait_jobs(env, "tick", 1)
        scheduled = datetime(2026, 1, 1, 0, 1, tzinfo=UTC)
        assert job.metadata.name == job_name_for("tick", scheduled)
        assert job.metadata.name == f"tick-{int(scheduled.timestamp()) // 60}"
        annotations = job.metadata.annotations or {}
        assert datetime.fromisoformat(annotations[SCHEDULED_TIMESTAMP_ANNOTATION]) == scheduled
        ref = (job.metadata.owner_references or [])[0]
        assert (ref.kind, ref.name, ref.controller) == ("CronJob", "tick", True)

        async def status_set() -> bool:
            cj = await api.get("tick")
            return bool(cj.status and cj.status.active)

        await env.eventually(status_set)
        cj = await api.get("tick")
        assert cj.status is not None
        assert cj.status.last_schedule_time == scheduled
        assert [r.name for r in cj.status.active or []] == [job.metadata.name]
        assert f"Normal SuccessfulCreate Created job {job.metadata.name}" in env.recorder.events
        await env.quiesce()
        assert not await _has_event(env, "UnexpectedJob")  # its own Job is not unexpected


async def test_forbid_skips_while_a_run_is_active() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("solo", concurrency_policy="Forbid"))
        await env.clock.advance(60.2)
        (first,) = await wait_jobs(env, "solo", 1)
        await env.clock.advance(60)
        await env.eventually(lambda: _has_event(env, "JobAlreadyActive"))
        assert len(await jobs_of(env, "solo")) == 1
        await complete(env, first)
        await env.eventually(lambda: _has_event(env, "SawCompletedJob"))
        await env.clock.advance(60)
        jobs = await wait_jobs(env, "solo", 2)
        assert jobs[0].metadata.name == first.metadata.name
        cj = await api.get("solo")
        assert cj.status is not None
        assert cj.status.last_successful_time is not None


async def _has_event(env: Env, reason: str) -> bool:
    return any(f" {reason} " in e for e in env.recorder.events)


async def test_replace_deletes_the_active_job_and_starts_a_new_one() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("swap", concurrency_policy="Replace"))
        await env.clock.advance(60.2)
        (first,) = await wait_jobs(env, "swap", 1)
        await env.clock.advance(60)

        async def replaced() -> bool:
            jobs = await jobs_of(env, "swap")
            return len(jobs) == 1 and jobs[0].metadata.name != first.metadata.name

        await env.eventually(replaced)
        assert f"Normal SuccessfulDelete Deleted job {first.metadata.name}" in env.recorder.events

        async def active_is_new() -> bool:
            cj = await api.get("swap")
            names = [r.name for r in (cj.status.active if cj.status else None) or []]
            return names == [(await jobs_of(env, "swap"))[0].metadata.name]

        await env.eventually(active_is_new)


async def test_history_limit_prunes_the_oldest_finished_jobs() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("hist", successful_jobs_history_limit=1))
        for n in (1, 2, 3):
            await env.clock.advance(60.2 if n == 1 else 60)
            await wait_jobs(env, "hist", n)
        jobs = await jobs_of(env, "hist")
        await api.patch("hist", {"spec": {"suspend": True}})
        for job in jobs:
            await complete(env, job)
        newest = max(jobs, key=lambda j: str(j.metadata.name))
        (kept,) = await wait_jobs(env, "hist", 1)
        assert kept.metadata.name == newest.metadata.name


async def test_time_zone_schedule_runs_at_local_time() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        # 05:47 in Kathmandu (UTC+05:45) is 00:02 UTC; evaluated in UTC it would be 05:47 UTC.
        await api.create(cronjob("ktm", "47 5 * * *", time_zone="Asia/Kathmandu"))
        await env.quiesce()
        due = datetime(2026, 1, 1, 0, 2, tzinfo=UTC)
        await env.clock.advance((due - START).total_seconds() - 1)
        await env.quiesce()
        assert await jobs_of(env, "ktm") == []
        await env.clock.advance(1.2)
        (job,) = await wait_jobs(env, "ktm", 1)
        assert job.metadata.name == job_name_for("ktm", due)
        stamp = (job.metadata.annotations or {})[SCHEDULED_TIMESTAMP_ANNOTATION]
        assert stamp == "2026-01-01T05:47:00+05:45"


async def test_without_a_time_zone_the_controller_zone_applies() -> None:
    """No spec.timeZone: the schedule runs in the controller's zone (kube-controller-manager's
    local zone; injected here), not in UTC."""
    async with running(cj_controller_in("Asia/Kathmandu")) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("local", "47 5 * * *"))
        await env.quiesce()
        due = datetime(2026, 1, 1, 0, 2, tzinfo=UTC)  # 05:47 in Kathmandu
        await env.clock.advance((due - START).total_seconds() - 1)
        await env.quiesce()
        assert await jobs_of(env, "local") == []
        await env.clock.advance(1.2)
        (job,) = await wait_jobs(env, "local", 1)
        assert job.metadata.name == job_name_for("local", due)
        stamp = (job.metadata.annotations or {})[SCHEDULED_TIMESTAMP_ANNOTATION]
        assert stamp == "2026-01-01T05:47:00+05:45"


async def test_every_duration_counts_from_creation_then_from_each_start() -> None:
    """``@every 90s``: the first Job 90 s after the CronJob was created, then every 90 s
    after the previous start (not on clock boundaries)."""
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await env.clock.advance(7)  # created at 00:00:07
        created = (await api.create(cronjob("every", "@every 1m30s"))).metadata.creation_timestamp
        assert created == datetime(2026, 1, 1, 0, 0, 7, tzinfo=UTC)
        await env.quiesce()
        await env.clock.advance(89)
        await env.quiesce()
        assert await jobs_of(env, "every") == []
        await env.clock.advance(1.2)
        (first,) = await wait_jobs(env, "every", 1)
        assert first.metadata.name == job_name_for(
            "every", datetime(2026, 1, 1, 0, 1, 37, tzinfo=UTC)
        )
        await env.quiesce()
        await env.clock.advance(89.5)  # 00:03:06.7: the next start (00:03:07) is not due
        await env.quiesce()
        assert len(await jobs_of(env, "every")) == 1
        await env.clock.advance(0.5)
        _, second = await wait_jobs(env, "every", 2)
        scheduled = (second.metadata.annotations or {})[SCHEDULED_TIMESTAMP_ANNOTATION]
        assert datetime.fromisoformat(scheduled) == datetime(2026, 1, 1, 0, 3, 7, tzinfo=UTC)
        assert not await _has_event(env, "UnparseableSchedule")


async def test_suspend_creates_nothing_then_only_the_latest_missed_time_runs() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("paused", suspend=True))
        await env.clock.advance(180)
        await env.quiesce()
        assert await jobs_of(env, "paused") == []
        await api.patch("paused", {"spec": {"suspend": False}})
        (job,) = await wait_jobs(env, "paused", 1)
        # Only the most recent missed time (00:03) is started.
        assert job.metadata.name == job_name_for("paused", datetime(2026, 1, 1, 0, 3, tzinfo=UTC))


async def test_unparseable_schedule_warns_and_creates_nothing() -> None:
    async with running(cj_controller) as env:
        api = env.client.api(CronJob, NS)
        await api.create(cronjob("bad", "not a cron"))
        await env.eventually(lambda: _has_event(env, "UnparseableSchedule"))
        await env.clock.advance(120)
        await env.quiesce()
        assert await jobs_of(env, "bad") == []
