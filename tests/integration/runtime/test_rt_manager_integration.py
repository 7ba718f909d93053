"""The manager against the embedded API server: HTTP endpoints, leader gating, graceful shutdown."""

from __future__ import annotations

import random

import anyio
import httpx
import msgspec
import pytest
from anyio.abc import TaskStatus

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import GracefulShutdownTimeout
from kcm.models.coordination_v1 import Lease
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import LeaderElectionOptions, Manager, Request, Result
from kcm.testing import FakeClock, client_config_for, eventually

pytestmark = pytest.mark.anyio


class Recorder:
    """Counts reconciles per key; an optional gate holds each reconcile until it is set."""

    def __init__(self, client: ApiClient, gate: anyio.Event | None = None) -> None:
        self.client = client
        self.calls: list[Request] = []
        self.entered = anyio.Event()
        self.finished: list[Request] = []
        self.gate = gate

    async def reconcile(self, request: Request) -> Result:
        self.calls.append(request)
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
            api = self.client.api(ConfigMap, request.namespace)
            cm = await api.get(request.name)
            meta = msgspec.structs.replace(cm.metadata, annotations={"reconciled": "yes"})
            await api.update(cm, msgspec.structs.replace(cm, metadata=meta))
        self.finished.append(request)
        return Result()


def client_for(server: ApiServer, agent: str) -> ApiClient:
    return ApiClient(msgspec.structs.replace(client_config_for(server), user_agent=agent))


def wire(manager: Manager, client: ApiClient, gate: anyio.Event | None = None) -> Recorder:
    recorder = Recorder(client, gate)
    manager.add(manager.controller_for(ConfigMap).build(recorder))
    return recorder


async def test_readyz_fails_until_caches_sync_and_metrics_are_served(
    api_server: ApiServer,
) -> None:
    api_server.faults.partition("mgr-a")  # the manager's list requests hang until heal()
    async with (
        client_for(api_server, "mgr-a") as client,
        ApiClient(client_config_for(api_server)) as admin,
    ):
        manager = Manager(
            client,
            health_address="127.0.0.1:0",
            leader_election=LeaderElectionOptions(name="test-mgr", namespace="default"),
        )
        recorder = wire(manager, client)
        async with anyio.create_task_group() as tg:
            tg.start_soon(manager.run)
            await eventually(lambda: manager.health_port is not None)
            base = f"http://127.0.0.1:{manager.health_port}"
            async with httpx.AsyncClient(base_url=base) as http:
                ready = await http.get("/readyz")
                assert ready.status_code == 500
                assert "[-]informer-sync failed: reason withheld" in ready.text
                verbose = await http.get("/readyz?verbose")
                assert "informer caches have not synced yet" in verbose.text
                assert (await http.get("/healthz")).text == "ok"  # alive while syncing

                api_server.faults.heal()
                with anyio.fail_after(5):
                    await manager.wait_elected()
                ready = await http.get("/readyz?verbose")
                assert ready.status_code == 200, ready.text
                assert "[+]informer-sync ok" in ready.text

                await admin.api(ConfigMap, "default").create(
                    ConfigMap(metadata=ObjectMeta(name="web"), data={"a": "1"})
                )
                await eventually(lambda: len(recorder.finished) >= 1)
                metrics = (await http.get("/metrics")).text
                assert (
                    'controller_runtime_reconcile_total{controller="configmap",result="success"}'
                    in metrics
                )
                assert 'workqueue_adds_total{controller="configmap",name="configmap"}' in metrics
                assert 'leader_election_master_status{name="test-mgr"} 1.0' in metrics
                healthz = await http.get("/healthz?verbose")
                assert "[+]leaderElection ok" in healthz.text
            tg.cancel_scope.cancel()


async def test_a_standby_manager_does_not_reconcile_until_it_takes_over(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()

    def options(identity: str) -> LeaderElectionOptions:
        return LeaderElectionOptions(
            name="pair", namespace="default", identity=identity, rng=random.Random(7)
        )

    async with (
        client_for(api_server, "mgr-a") as client_a,
        client_for(api_server, "mgr-b") as client_b,
        ApiClient(client_config_for(api_server)) as admin,
    ):
        api = admin.api(ConfigMap, "default")
        a = Manager(client_a, clock=clock, leader_election=options("a"))
        b = Manager(client_b, clock=clock, leader_election=options("b"))
        rec_a, rec_b = wire(a, client_a), wire(b, client_b)
        async with anyio.create_task_group() as tg:
            scope_a = anyio.CancelScope()

            async def run_a(*, task_status: TaskStatus[None]) -> None:
                with scope_a:
                    await a.run(task_status=task_status)

            await tg.start(run_a)
            with anyio.fail_after(5):
                await a.wait_elected()
            await tg.start(b.run)  # b's caches sync; its first try finds a's lease held
            await eventually(lambda: b.elector is not None and b.elector.leader == "a")
            await api.create(ConfigMap(metadata=ObjectMeta(name="x"), data={"v": "1"}))
            await eventually(lambda: len(rec_a.finished) >= 1)
            await eventually(
                lambda: b.factory.lister_for(ConfigMap).get_or_none("default", "x") is not None
            )
            assert rec_b.calls == []  # b has the object cached, but does not reconcile it
            assert not b.is_leader
            assert a.is_leader

            scope_a.cancel()  # a steps down and releases the lease
            lease_api = admin.api(Lease, "default")

            async def released() -> bool:
                lease = await lease_api.get("pair")
                return lease.spec is not None and lease.spec.holder_identity == ""

            with anyio.fail_after(5):
                while not await released():  # noqa: ASYNC110 - the lease lives in the server
                    await anyio.sleep(0.01)
            await clock.advance(4.4)  # b's next (jittered) retry finds the lease free
            with anyio.fail_after(5):
                await b.wait_elected()
            await eventually(lambda: len(rec_b.finished) >= 1)
            assert rec_b.finished[0] == ("default", "x")
            lease = await lease_api.get("pair")
            assert lease.spec is not None
            assert lease.spec.holder_identity == "b"
            tg.cancel_scope.cancel()


async def test_graceful_shutdown_finishes_the_in_flight_reconcile_then_releases(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    gate = anyio.Event()
    async with (
        client_for(api_server, "mgr") as client,
        ApiClient(client_config_for(api_server)) as admin,
    ):
        manager = Manager(
            client,
            clock=clock,
            leader_election=LeaderElectionOptions(name="grace", namespace="default"),
        )
        recorder = Recorder(client, gate)
        controller = manager.controller_for(ConfigMap).build(recorder)
        manager.add(controller)
        api = admin.api(ConfigMap, "default")
        stopped = anyio.Event()
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def run(*, task_status: TaskStatus[None]) -> None:
                with scope:
                    await manager.run(task_status=task_status)
                stopped.set()

            await tg.start(run)
            with anyio.fail_after(5):
                await manager.wait_elected()
            await api.create(ConfigMap(metadata=ObjectMeta(name="slow"), data={}))
            with anyio.fail_after(5):
                await recorder.entered.wait()
            scope.cancel()  # shut down while the reconcile waits on the gate
            # Every task runs until it blocks, and virtual time passes (less than the 2 s
            # retry period, so no lease renewal is due): the shutdown is waiting for the
            # reconcile, nothing else.
            await clock.advance(1.9)
            assert controller.queue.shutting_down  # draining
            assert controller.active_workers == 1
            assert not stopped.is_set()
            assert recorder.finished == []
            lease = await admin.api(Lease, "default").get("grace")
            assert lease.spec is not None
            assert lease.spec.holder_identity  # still held
            gate.set()
            with anyio.fail_after(5):
                await stopped.wait()
        assert recorder.finished == [("default", "slow")]
        cm = await api.get("slow")
        assert (cm.metadata.annotations or {}).get("reconciled") == "yes"  # its write landed
        lease = await admin.api(Lease, "default").get("grace")
        assert lease.spec is not None
        assert lease.spec.holder_identity == ""  # released after the reconcile finished


async def test_cache_sync_timeout_stops_the_manager(api_server: ApiServer) -> None:
    api_server.faults.partition("stuck")
    clock = FakeClock()
    async with client_for(api_server, "stuck") as client:
        manager = Manager(client, clock=clock, cache_sync_timeout=30)
        wire(manager, client)
        errors: list[Exception] = []

        async def run() -> None:
            try:
                await manager.run()
            except TimeoutError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await clock.advance(29)
            assert errors == []
            await clock.advance(1)
            await eventually(lambda: bool(errors))
        assert "did not sync within 30" in str(errors[0])
        api_server.faults.heal()


async def test_cancelling_while_caches_sync_returns_promptly(api_server: ApiServer) -> None:
    api_server.faults.partition("syncing")  # the initial list never answers
    log: list[str] = []

    class Probe:
        async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            log.append("started")  # must never happen: caches never synced
            task_status.started()

    async with client_for(api_server, "syncing") as client:
        manager = Manager(client, health_address="127.0.0.1:0")
        wire(manager, client)
        manager.add(Probe(), needs_leader_election=False)
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(manager.run)
                await eventually(lambda: manager.health_port is not None)
                tg.cancel_scope.cancel()
        assert log == []
        assert manager.health_port is None  # the endpoint is closed again
        api_server.faults.heal()


async def test_a_reconcile_outliving_the_grace_is_cancelled(api_server: ApiServer) -> None:
    clock = FakeClock()
    never = anyio.Event()
    async with client_for(api_server, "mgr") as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=2)
        recorder = wire(manager, client, never)  # the reconcile waits for ever
        await client.api(ConfigMap, "default").create(ConfigMap(metadata=ObjectMeta(name="s")))
        stopped = anyio.Event()
        scope = anyio.CancelScope()
        errors: list[GracefulShutdownTimeout] = []

        async def run() -> None:
            with scope:
                try:
                    await manager.run()
                except GracefulShutdownTimeout as exc:
                    errors.append(exc)
            stopped.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(5):
                await recorder.entered.wait()
            scope.cancel()
            await clock.advance(1.9)  # the controller got the manager's 2 s grace
            assert not stopped.is_set()
            await clock.advance(0.1)
            with anyio.fail_after(5):
                await stopped.wait()
        assert recorder.finished == []  # cancelled, not finished
        assert len(errors) == 1  # run() says the shutdown was cut short
        assert errors[0].timeout == 2
        assert errors[0].runnables == ("Controller configmap",)
