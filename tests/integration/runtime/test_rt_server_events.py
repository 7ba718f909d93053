"""Builder-wired controllers fed by the embedded API server: predicates on real write events,
backoff and ``requeue_after`` on a fake clock.

"Not reconciled" is checked without waiting for time to pass: after the filtered write, a
second object (the barrier) gets a write that passes the predicate. One watch stream delivers
both events in resourceVersion order and one worker takes keys first in, first out, so had the
filtered event passed, its key would have been reconciled before the barrier's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, ResourceInfo, Unstructured, from_dict
from kcm.models.apiextensions_v1 import CustomResourceDefinition
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import (
    Controller,
    ControllerBuilder,
    Predicate,
    Request,
    Result,
    annotations_changed,
    generation_changed,
    labels_changed,
)
from kcm.testing import FakeClock, client_config_for, crd_manifest

pytestmark = pytest.mark.anyio

NS = "default"


def key(name: str) -> ObjectKey:
    return ObjectKey(NS, name)


class Log:
    """Records each reconciled key (and the virtual time); ``wait`` blocks until a count."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.clock = clock
        self.calls: list[Request] = []
        self.times: list[float] = []
        self.behaviour: Callable[[int], Result] = lambda n: Result()
        self._changed = anyio.Event()

    async def reconcile(self, request: Request) -> Result:
        self.calls.append(request)
        if self.clock is not None:
            self.times.append(self.clock.monotonic() - 1000.0)
        self._changed.set()
        return self.behaviour(len(self.calls))

    def count(self, name: str) -> int:
        return self.calls.count(key(name))

    async def wait(self, name: str, count: int) -> None:
        """Wait (real time: the event travels over HTTP) until ``name`` was reconciled
        ``count`` times."""
        with anyio.fail_after(5):
            while self.count(name) < count:
                self._changed = anyio.Event()
                await self._changed.wait()


@asynccontextmanager
async def running(
    factory: SharedInformerFactory, controller: Controller[ObjectKey]
) -> AsyncIterator[None]:
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(5):
            await tg.start(factory.run)
            await tg.start(controller.run)
        yield
        tg.cancel_scope.cancel()


async def widgets(client: ApiClient) -> ResourceInfo:
    """A CRD with a status subresource: status writes do not bump metadata.generation."""
    crd = crd_manifest(group="example.com", kind="Widget", status=True)
    await client.api(CustomResourceDefinition).create(from_dict(CustomResourceDefinition, crd))
    return await client.discover("example.com/v1", "Widget")


def widget(name: str, size: int) -> Unstructured:
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}}
    return Unstructured.from_dict({**body, "spec": {"size": size}})


async def test_generation_changed_ignores_status_writes_and_passes_spec_changes(
    api_server: ApiServer,
) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        info = await widgets(client)
        api = client.api(Unstructured, NS, resource=info)
        await api.create(widget("target", 1))
        await api.create(widget("barrier", 1))
        factory = SharedInformerFactory(client)
        log = Log()
        controller = (
            ControllerBuilder(factory).for_(info, predicates=[generation_changed()]).build(log)
        )
        lister = factory.unstructured_informer(info).lister()
        async with running(factory, controller):
            await log.wait("target", 1)  # the initial list (creates always pass)
            await log.wait("barrier", 1)

            status = await api.patch_status("target", {"status": {"ready": True}})
            assert status.metadata.generation == 1
            await api.patch("barrier", {"spec": {"size": 2}})  # generation 2: passes
            await log.wait("barrier", 2)
            assert lister.get(NS, "target")["status"] == {"ready": True}  # the event arrived
            assert log.count("target") == 1  # ...and was dropped

            changed = await api.patch("target", {"spec": {"size": 3}})
            assert changed.metadata.generation == 2
            await log.wait("target", 2)
            assert log.calls[2:] == [key("barrier"), key("target")]  # after the initial list


@pytest.mark.parametrize(
    ("make_predicate", "kept", "dropped"),
    [
        (annotations_changed, {"annotations": {"a": "1"}}, {"labels": {"l": "1"}}),
        (labels_changed, {"labels": {"l": "1"}}, {"annotations": {"a": "1"}}),
    ],
    ids=["annotations_changed", "labels_changed"],
)
async def test_label_and_annotation_predicates_on_server_writes(
    api_server: ApiServer,
    make_predicate: Callable[[], Predicate[Any]],
    kept: dict[str, Any],
    dropped: dict[str, Any],
) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        api = client.api(ConfigMap, NS)
        for name in ("target", "barrier"):
            await api.create(ConfigMap(metadata=ObjectMeta(name=name), data={"v": "0"}))
        factory = SharedInformerFactory(client)
        log = Log()
        controller = (
            ControllerBuilder(factory).for_(ConfigMap, predicates=[make_predicate()]).build(log)
        )
        lister = factory.lister_for(ConfigMap)
        async with running(factory, controller):
            await log.wait("target", 1)
            await log.wait("barrier", 1)

            await api.patch("target", {"data": {"v": "1"}})  # neither labels nor annotations
            await api.patch("target", {"metadata": dropped})  # the other kind of map
            await api.patch("barrier", {"metadata": kept})  # passes
            await log.wait("barrier", 2)
            target = lister.get(NS, "target")
            assert target.data == {"v": "1"}
            assert (target.metadata.labels or {}) | (target.metadata.annotations or {}) == {
                **next(iter(dropped.values()))
            }
            assert log.count("target") == 1

            await api.patch("target", {"metadata": kept})
            await log.wait("target", 2)
            assert log.calls[2:] == [key("barrier"), key("target")]  # after the initial list


async def test_failures_back_off_and_requeue_after_is_honoured_on_a_fake_clock(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    async with ApiClient(client_config_for(api_server)) as client:
        api = client.api(ConfigMap, NS)
        factory = SharedInformerFactory(client, clock=clock)
        log = Log(clock)

        def behaviour(n: int) -> Result:
            if n in (1, 2, 3, 6):
                raise RuntimeError(f"failure {n}")
            return Result(requeue_after=30) if n == 4 else Result()

        log.behaviour = behaviour
        controller = ControllerBuilder(factory, clock=clock).for_(ConfigMap).build(log)
        async with running(factory, controller):
            await api.create(ConfigMap(metadata=ObjectMeta(name="web")))
            await log.wait("web", 1)  # the add event, over HTTP
            start = log.times[0]

            async def next_after(delay: float) -> None:
                """The next reconcile comes ``delay`` virtual seconds after the last one."""
                calls = len(log.calls)
                due = 1000.0 + log.times[-1] + delay
                await clock.advance(due - 1e-6 - clock.monotonic())
                assert len(log.calls) == calls, log.times
                await clock.advance(2e-6)
                assert len(log.calls) == calls + 1, log.times
                assert log.times[-1] == pytest.approx(due - 1000.0, abs=1e-9)

            # ItemExponentialFailureRateLimiter(5 ms, 1000 s): 5, 10, 20 ms after each failure.
            await next_after(0.005)
            await next_after(0.010)
            await next_after(0.020)  # returns requeue_after=30: backoff reset, back in 30 s
            await next_after(30)  # success
            await clock.advance(200)
            assert len(log.calls) == 5  # nothing more is scheduled
            offsets = [t - start for t in log.times]
            assert offsets == pytest.approx([0, 0.005, 0.015, 0.035, 30.035], abs=1e-9)

            await api.patch("web", {"data": {"v": "1"}})  # a real change: reconcile 6 fails
            await log.wait("web", 6)
            await next_after(0.005)  # 5 ms again: requeue_after and success reset the backoff
            assert log.calls == [key("web")] * 7
