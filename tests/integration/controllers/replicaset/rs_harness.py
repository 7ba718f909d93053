"""Helpers for the ReplicaSet / ReplicationController integration tests.

* :class:`Tap`: an httpx transport between a client and the embedded API server that logs
  requests (to count pod creates and see slow-start batches), answers chosen pod creates
  with a failure Status, and can hold the pod watch stream back (a slow informer).
* :func:`running`: the controller under test on its own client and informer factory.
* Kubelet stand-ins: :func:`set_ready`, :func:`set_phase`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio
import httpx
import msgspec
from prometheus_client import CollectorRegistry

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import Container, Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce
from tests.helpers.controller_stop import stop_controllers
from tests.helpers.held_stream import HeldStream

NS = "default"
LABELS = {"app": "web"}


def template(labels: dict[str, str] | None = None, **meta: Any) -> PodTemplateSpec:
    return PodTemplateSpec(
        metadata=ObjectMeta(labels=labels or dict(LABELS), **meta),
        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
    )


def bare_pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, labels=labels or dict(LABELS)),
        spec=PodSpec(containers=[Container(name="c", image="nginx")], **spec),
    )


@dataclass
class PodCreate:
    """One POST of a pod: when it started relative to the others."""

    index: int
    completed_before_start: int
    failed: bool = False


@dataclass
class Tap(httpx.AsyncBaseTransport):
    """Logs every request and lets a test fail pod creates or hold the pod watch stream."""

    inner: httpx.AsyncBaseTransport = field(default_factory=httpx.AsyncHTTPTransport)
    requests: list[tuple[str, str]] = field(default_factory=list)
    creates: list[PodCreate] = field(default_factory=list)
    fail_creates: int = 0
    """Answer this many of the next pod creates with ``failure`` instead of forwarding them."""
    fail_create_at: set[int] = field(default_factory=set)
    """Answer the pod creates with these (0-based) indexes with ``failure``."""
    failure: tuple[int, dict[str, Any]] = (
        403,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": "Forbidden",
            "message": 'pods "web" is forbidden: exceeded quota: compute',
            "code": 403,
        },
    )
    pod_watch_gate: anyio.Event | None = None
    """While set to an unset Event, pod watch events are held back."""
    _completed: int = 0
    _arrived: anyio.Event = field(default_factory=anyio.Event)

    def pod_creates(self) -> int:
        return len(self.creates)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.requests.append((request.method, str(request.url.raw_path, "ascii")))
        if request.method == "POST" and path.endswith("/pods"):
            return await self._create(request)
        response = await self.inner.handle_async_request(request)
        if request.method == "GET" and path.endswith("/pods") and "watch" in str(request.url):
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=HeldStream(response.stream, lambda: self.pod_watch_gate),
                extensions=response.extensions,
            )
        return response

    async def _create(self, request: httpx.Request) -> httpx.Response:
        record = PodCreate(len(self.creates), self._completed)
        self.creates.append(record)
        self._arrived.set()
        self._arrived = anyio.Event()
        try:
            if self.fail_creates > 0 or record.index in self.fail_create_at:
                self.fail_creates = max(0, self.fail_creates - 1)
                record.failed = True
                await request.aread()
                # A failure is answered only once another create arrives (or after 50 ms), so
                # calls of one batch are seen in flight together.
                with anyio.move_on_after(0.05):
                    await self._arrived.wait()
                code, body = self.failure
                return httpx.Response(code, json=body)
            return await self.inner.handle_async_request(request)
        finally:
            self._completed += 1

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Running:
    client: ApiClient
    controller: Any
    recorder: FakeRecorder
    tap: Tap
    registry: CollectorRegistry
    factory: SharedInformerFactory
    clock: FakeClock | None = None

    async def quiesce(self) -> None:
        """Wait until the controller has acted on everything so far (see controller_quiesce);
        while the pod watch is held back the cache cannot match the server, so then only
        until its queue is empty and no reconcile is in flight."""
        inner = self.controller.manager.controller
        gate = self.tap.pod_watch_gate
        if gate is None or gate.is_set():
            await quiesce([inner], self.factory, self.client, clock=self.clock)
            return
        with anyio.fail_after(10):
            while len(inner.queue) or inner.queue.processing:  # noqa: ASYNC110 - no idle event
                await anyio.sleep(0.01)

    def reconciles(self, name: str) -> float:
        total = 0.0
        for result in ("success", "error", "requeue", "requeue_after"):
            value = self.registry.get_sample_value(
                "controller_runtime_reconcile_total", {"controller": name, "result": result}
            )
            total += value or 0.0
        return total


@asynccontextmanager
async def running(
    server: ApiServer, make: Callable[..., Any], **kwargs: Any
) -> AsyncIterator[Running]:
    """The controller ``make(client, factory, recorder=, registry=, **kwargs)`` on its own
    tapped client, with a running informer factory."""
    tap = Tap()
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    recorder = FakeRecorder()
    registry = CollectorRegistry()
    async with ApiClient(config, transport=tap) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        controller = make(client, factory, recorder=recorder, registry=registry, **kwargs)
        scope = anyio.CancelScope()
        stopped = anyio.Event()

        async def run_controller(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            try:
                with scope:
                    await controller.run(task_status=task_status)
            finally:
                stopped.set()

        with anyio.fail_after(10):
            await tg.start(factory.run)
            await tg.start(run_controller)
        try:
            clock = kwargs.get("clock")
            yield Running(
                client,
                controller,
                recorder,
                tap,
                registry,
                factory,
                clock if isinstance(clock, FakeClock) else None,
            )
        finally:
            await stop_controllers(scope, stopped)
            tg.cancel_scope.cancel()


async def set_ready(api: Api[Pod], name: str, *, at: datetime, ready: bool = True) -> Pod:
    """Play the kubelet: phase Running and a Ready condition that changed at ``at``."""
    return await api.patch_status(
        name,
        {
            "status": {
                "phase": "Running",
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True" if ready else "False",
                        "lastTransitionTime": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    }
                ],
            }
        },
    )


async def set_phase(api: Api[Pod], name: str, phase: str, **status: Any) -> Pod:
    """Play the kubelet: set the phase (and any other status fields, wire names)."""
    return await api.patch_status(name, {"status": {"phase": phase, **status}})


def owned_by(pod: Pod, uid: str | None) -> bool:
    return any(r.controller and r.uid == uid for r in pod.metadata.owner_references or ())
