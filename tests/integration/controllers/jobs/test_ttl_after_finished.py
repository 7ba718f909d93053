"""TTL-after-finished controller against the embedded API server on a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kcm.controllers.ttlafterfinished import TTLAfterFinishedController
from kcm.errors import NotFound
from kcm.models import format_time
from tests.integration.controllers.jobs.jobs_harness import Env, job_manifest, running

pytestmark = pytest.mark.anyio


def ttl_controller(policy: str = "Background") -> Any:
    def make(client: Any, factory: Any, clock: Any, recorder: Any) -> TTLAfterFinishedController:
        return TTLAfterFinishedController(
            client, factory, recorder=recorder, clock=clock, propagation_policy=policy
        )

    return make


async def finish(env: Env, name: str, *, ago: float = 0.0, type_: str = "Complete") -> None:
    """Mark a Job finished ``ago`` seconds before now (the Job controller's job)."""
    when = env.clock.now().timestamp() - ago
    stamp = format_time(datetime.fromtimestamp(when, UTC))
    await env.jobs.patch_status(
        name,
        {
            "status": {
                "conditions": [{"type": type_, "status": "True", "lastTransitionTime": stamp}]
            }
        },
    )


async def exists(env: Env, name: str) -> bool:
    try:
        job = await env.jobs.get(name)
    except NotFound:
        return False
    return job.metadata.deletion_timestamp is None


async def test_deletes_exactly_when_the_ttl_expires() -> None:
    async with running(ttl_controller()) as env:
        await env.jobs.create(job_manifest("short", ttl_seconds_after_finished=5))
        await finish(env, "short")
        await env.quiesce()
        await env.clock.advance(4.9)
        await env.quiesce()
        assert await exists(env, "short")
        await env.clock.advance(0.1)
        await env.eventually(lambda: _not(exists(env, "short")))


async def _not(awaitable: Any) -> bool:
    return not await awaitable


async def test_foreground_by_default_leaves_the_job_to_the_garbage_collector() -> None:
    async with running(ttl_controller("Foreground")) as env:
        await env.jobs.create(job_manifest("fg", ttl_seconds_after_finished=0))
        await finish(env, "fg", type_="Failed")

        async def deleting() -> bool:
            job = await env.jobs.get("fg")
            return job.metadata.deletion_timestamp is not None

        await env.eventually(deleting)
        job = await env.jobs.get("fg")
        assert "foregroundDeletion" in (job.metadata.finalizers or [])


async def test_no_ttl_or_unfinished_job_is_never_deleted() -> None:
    async with running(ttl_controller()) as env:
        await env.jobs.create(job_manifest("forever"))
        await finish(env, "forever", ago=3600)
        await env.jobs.create(job_manifest("running", ttl_seconds_after_finished=1))
        await env.clock.advance(3600)
        await env.quiesce()
        assert await exists(env, "forever")
        assert await exists(env, "running")


async def test_ttl_added_after_finishing_long_ago_deletes_at_once() -> None:
    async with running(ttl_controller()) as env:
        await env.jobs.create(job_manifest("old"))
        await finish(env, "old", ago=3600)
        await env.quiesce()
        assert await exists(env, "old")
        await env.jobs.patch("old", {"spec": {"ttlSecondsAfterFinished": 10}})
        await env.eventually(lambda: _not(exists(env, "old")))


async def test_raising_the_ttl_before_expiry_postpones_deletion() -> None:
    async with running(ttl_controller()) as env:
        await env.jobs.create(job_manifest("grow", ttl_seconds_after_finished=10))
        await finish(env, "grow")
        await env.quiesce()
        await env.clock.advance(5)
        await env.jobs.patch("grow", {"spec": {"ttlSecondsAfterFinished": 20}})
        await env.quiesce()
        await env.clock.advance(6)  # past the old expiry (10 s)
        await env.quiesce()
        assert await exists(env, "grow")
        await env.clock.advance(9)  # 20 s after finishing
        await env.eventually(lambda: _not(exists(env, "grow")))
