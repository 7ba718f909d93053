"""Shared helpers for the Job, CronJob and TTL-after-finished integration tests.

Everything runs on one FakeClock (server timestamps, informers, controllers), so timed
behaviour (backoff, deadlines, schedules, TTLs) happens exactly when a test advances time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from controller_quiesce import quiesce

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models.batch_v1 import Job, JobSpec
from kcm.models.core_v1 import Container, Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, FakeRecorder

NS = "default"
_GRACE = 31.0


@dataclass
class Env:
    server: ApiServer
    client: ApiClient
    clock: FakeClock
    recorder: FakeRecorder
    built: list[Any]
    factory: SharedInformerFactory

    @property
    def jobs(self) -> Api[Job]:
        return self.client.api(Job, NS)

    @property
    def pods(self) -> Api[Pod]:
        return self.client.api(Pod, NS)

    async def eventually(
        self, check: Callable[[], Awaitable[bool]], *, limit: float = 10.0, tick: float = 0.0
    ) -> None:
        """Poll ``check`` (real time) until true; ``tick`` > 0 also advances the fake clock
        by that much per round (for retries on the fake clock)."""
        with anyio.fail_after(limit):
            while not await check():
                await anyio.sleep(0.01)
                if tick:
                    await self.clock.advance(tick)

    async def quiesce(self) -> None:
        """Wait until the controllers have acted on everything that happened so far: caches
        match the server, queues are empty, no reconcile is in flight (no fake time passes;
        see controller_quiesce). Use it before a negative check."""
        await quiesce(
            [runnable.controller for runnable in self.built],
            self.factory,
            self.client,
            clock=self.clock,
        )

    async def job_pods(self, job: str, *, active_only: bool = False) -> list[Pod]:
        pods = (await self.pods.list(label_selector=f"job-name={job}")).items
        if active_only:
            pods = [
                p
                for p in pods
                if p.metadata.deletion_timestamp is None
                and (p.status is None or p.status.phase not in ("Succeeded", "Failed"))
            ]
        return sorted(pods, key=lambda p: str(p.metadata.name))

    async def set_phase(self, pod: Pod, phase: str, **extra: Any) -> None:
        """Play the kubelet: set a pod's phase through the status subresource."""
        await self.pods.patch_status(str(pod.metadata.name), {"status": {"phase": phase, **extra}})

    async def job(self, name: str) -> Job:
        return await self.jobs.get(name)


async def until(check: Callable[[], Awaitable[bool]], *, limit: float = 10.0) -> None:
    """Poll ``check`` in real time until it is true; fail after ``limit`` seconds."""
    with anyio.fail_after(limit):
        while True:
            if await check():
                return
            await anyio.sleep(0.01)


def job_manifest(name: str, **spec: Any) -> Job:
    template = PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": name}),
        spec=PodSpec(containers=[Container(name="main", image="busybox")], restart_policy="Never"),
    )
    return Job(
        metadata=ObjectMeta(name=name, namespace=NS), spec=JobSpec(template=template, **spec)
    )


def condition(job: Job, type_: str) -> Any:
    for cond in (job.status.conditions if job.status else None) or ():
        if cond.type == type_ and cond.status == "True":
            return cond
    return None


@asynccontextmanager
async def running(
    *makers: Callable[[ApiClient, SharedInformerFactory, FakeClock, FakeRecorder], Any],
) -> AsyncIterator[Env]:
    """An ApiServer, client and factory on one FakeClock, with each maker's runnable running."""
    clock = FakeClock()
    recorder = FakeRecorder()
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(server.client_config()) as client,
        anyio.create_task_group() as tg,
    ):
        factory = SharedInformerFactory(client, clock=clock)
        built = [make(client, factory, clock, recorder) for make in makers]
        await tg.start(factory.run)
        for runnable in built:
            await tg.start(runnable.run)
        try:
            yield Env(server, client, clock, recorder, built, factory)
        finally:
            tg.cancel_scope.cancel()
            # Controllers give in-flight reconciles a grace period on *their* clock (this fake
            # one): move it past the grace so a stuck drain cannot hang the test.
            with anyio.CancelScope(shield=True):
                await clock.advance(_GRACE)
