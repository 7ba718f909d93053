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
import httpx

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models.batch_v1 import Job, JobSpec
from kcm.models.core_v1 import Container, Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce
from tests.helpers.controller_stop import stop_controllers

NS = "default"


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


def job_manifest(name: str, *, restart_policy: str = "Never", **spec: Any) -> Job:
    template = PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": name}),
        spec=PodSpec(
            containers=[Container(name="main", image="busybox")], restart_policy=restart_policy
        ),
    )
    return Job(
        metadata=ObjectMeta(name=name, namespace=NS), spec=JobSpec(template=template, **spec)
    )


def condition(job: Job, type_: str) -> Any:
    for cond in (job.status.conditions if job.status else None) or ():
        if cond.type == type_ and cond.status == "True":
            return cond
    return None


Maker = Callable[[ApiClient, SharedInformerFactory, FakeClock, FakeRecorder], Any]


@asynccontextmanager
async def cluster(transport: httpx.AsyncBaseTransport | None = None) -> AsyncIterator[Env]:
    """An ApiServer and a client on one FakeClock, no controller yet (see :func:`started`);
    ``transport`` sits between the client and the server."""
    clock = FakeClock()
    recorder = FakeRecorder()
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(client_config_for(server), transport=transport) as client,
    ):
        yield Env(server, client, clock, recorder, [], SharedInformerFactory(client, clock=clock))


@asynccontextmanager
async def started(env: Env, *makers: Maker) -> AsyncIterator[list[Any]]:
    """Run each maker's controller on a fresh informer factory (a controller process that
    starts now) until the block ends; meanwhile ``env.built``/``env.factory`` are theirs.
    No fake time passes when they stop."""
    factory = SharedInformerFactory(env.client, clock=env.clock)
    built = [make(env.client, factory, env.clock, env.recorder) for make in makers]
    stopped = [anyio.Event() for _ in built]

    async def run(runnable: Any, done: anyio.Event, *, task_status: Any) -> None:
        try:
            await runnable.run(task_status=task_status)
        finally:
            done.set()

    async with anyio.create_task_group() as tg:
        await tg.start(factory.run)
        for runnable, done in zip(built, stopped, strict=True):
            await tg.start(run, runnable, done)
        env.built, env.factory = built, factory
        try:
            yield built
        finally:
            await stop_controllers(tg.cancel_scope, *stopped)


@asynccontextmanager
async def running(
    *makers: Maker, transport: httpx.AsyncBaseTransport | None = None
) -> AsyncIterator[Env]:
    """An ApiServer, client and factory on one FakeClock, with each maker's runnable running."""
    async with cluster(transport) as env, started(env, *makers):
        yield env
