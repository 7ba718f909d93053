"""The event broadcaster writing core/v1 Events to the embedded API server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.models.core_v1 import ConfigMap, Event, Namespace, ObjectReference
from kcm.models.meta_v1 import ObjectMeta
from kcm.record import EventBroadcaster, EventRecorder
from kcm.testing import FakeClock, client_config_for

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def broadcasting(
    server: ApiServer, *, clock: Clock = SYSTEM_CLOCK, retry_interval: float = 10.0
) -> AsyncIterator[tuple[ApiClient, EventBroadcaster, EventRecorder]]:
    async with ApiClient(client_config_for(server)) as client:
        broadcaster = EventBroadcaster(client, clock=clock, retry_interval=retry_interval)
        async with anyio.create_task_group() as tg:
            await tg.start(broadcaster.run)
            yield client, broadcaster, broadcaster.recorder("demo-controller")
            tg.cancel_scope.cancel()


async def settle(broadcaster: EventBroadcaster) -> None:
    with anyio.fail_after(10):
        await broadcaster.wait_idle()


async def events_in(client: ApiClient, namespace: str) -> list[Event]:
    return (await client.api(Event, namespace).list()).items


async def test_event_round_trip_with_repeat_count(api_server: ApiServer) -> None:
    clock = FakeClock()
    async with broadcasting(api_server, clock=clock) as (client, broadcaster, recorder):
        cm = await client.api(ConfigMap, "default").create(
            ConfigMap(metadata=ObjectMeta(name="web"), data={"a": "1"})
        )
        recorder.event(cm, "Normal", "Synced", "configmap synced")
        await settle(broadcaster)
        [event] = await events_in(client, "default")
        assert event.involved_object == ObjectReference(
            api_version="v1",
            kind="ConfigMap",
            namespace="default",
            name="web",
            uid=cm.metadata.uid,
            resource_version=cm.metadata.resource_version,
        )
        assert (event.type, event.reason, event.message, event.count) == (
            "Normal",
            "Synced",
            "configmap synced",
            1,
        )
        assert event.source is not None
        assert event.source.component == "demo-controller"
        assert (event.metadata.name or "").startswith("web.")

        await clock.advance(60)
        recorder.event(cm, "Normal", "Synced", "configmap synced")
        await settle(broadcaster)
        [again] = await events_in(client, "default")
        assert again.metadata.name == event.metadata.name
        assert again.count == 2
        assert again.first_timestamp == event.first_timestamp
        assert again.last_timestamp == clock.now()


async def test_cluster_scoped_objects_report_into_default(api_server: ApiServer) -> None:
    async with broadcasting(api_server) as (client, broadcaster, recorder):
        ns = await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="team-a")))
        recorder.event(ns, "Warning", "QuotaLow", "quota nearly used up")
        await settle(broadcaster)
        [event] = await events_in(client, "default")
        assert event.involved_object is not None
        assert (event.involved_object.kind, event.involved_object.name) == ("Namespace", "team-a")
        assert event.involved_object.namespace is None
        assert await events_in(client, "team-a") == []


async def test_eleven_similar_events_aggregate(api_server: ApiServer) -> None:
    async with broadcasting(api_server) as (client, broadcaster, recorder):
        cm = await client.api(ConfigMap, "default").create(
            ConfigMap(metadata=ObjectMeta(name="flaky"))
        )
        for i in range(11):
            recorder.event(cm, "Warning", "FailedSync", f"error {i}")
        await settle(broadcaster)
        events = await events_in(client, "default")
    assert len(events) == 10
    combined = [e for e in events if (e.message or "").startswith("(combined from similar events)")]
    assert [(e.message, e.count) for e in combined] == [
        ("(combined from similar events): error 10", 2)
    ]


async def test_spam_filter_on_fake_time(api_server: ApiServer) -> None:
    clock = FakeClock()
    async with broadcasting(api_server, clock=clock) as (client, broadcaster, recorder):
        cm = await client.api(ConfigMap, "default").create(ConfigMap(metadata=ObjectMeta(name="s")))
        for i in range(27):
            recorder.event(cm, "Normal", f"Reason{i}", "m")
        await settle(broadcaster)
        assert len(await events_in(client, "default")) == 25
        await clock.advance(300)
        recorder.event(cm, "Normal", "AfterRefill", "m")
        recorder.event(cm, "Normal", "TooSoon", "m")
        await settle(broadcaster)
        reasons = {e.reason for e in await events_in(client, "default")}
    assert len(reasons) == 26
    assert "AfterRefill" in reasons
    assert "TooSoon" not in reasons


async def test_a_failed_write_is_retried(
    api_server: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with broadcasting(api_server, retry_interval=0.01) as (client, broadcaster, recorder):
        cm = await client.api(ConfigMap, "default").create(ConfigMap(metadata=ObjectMeta(name="r")))
        api_server.faults.fail_next(2, code=500)  # POSTs without Retry-After: not client-retried
        recorder.event(cm, "Normal", "Retried", "made it")
        await settle(broadcaster)
        [event] = await events_in(client, "default")
    assert event.reason == "Retried"
    retries = [r for r in caplog.records if "may retry" in r.getMessage()]
    assert len(retries) == 2
    assert "500" in retries[0].getMessage()


async def test_manager_event_recorder_writes_through_the_broadcaster(api_server: ApiServer) -> None:
    from kcm.runtime import Manager

    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, graceful_shutdown_timeout=5)
        recorder = manager.event_recorder("manager-test-controller")
        assert manager.event_recorder("manager-test-controller") is recorder
        cm = await client.api(ConfigMap, "default").create(ConfigMap(metadata=ObjectMeta(name="m")))
        recorder.event(cm, "Normal", "Recorded", "before the manager runs")
        rv = (await client.api(Event, "default").list()).metadata.resource_version
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            with anyio.fail_after(10):
                async with client.api(Event, "default").watch(resource_version=rv) as stream:
                    async for change in stream:
                        event = change.object
                        break
            tg.cancel_scope.cancel()
    assert change.type == "ADDED"
    assert event.reason == "Recorded"
    assert event.source is not None
    assert event.source.component == "manager-test-controller"


async def test_a_deleted_event_is_recreated_on_repeat(api_server: ApiServer) -> None:
    async with broadcasting(api_server) as (client, broadcaster, recorder):
        cm = await client.api(ConfigMap, "default").create(ConfigMap(metadata=ObjectMeta(name="d")))
        recorder.event(cm, "Normal", "Synced", "ok")
        await settle(broadcaster)
        [first] = await events_in(client, "default")
        await client.api(Event, "default").delete(first.metadata.name or "")
        recorder.event(cm, "Normal", "Synced", "ok")
        await settle(broadcaster)
        [again] = await events_in(client, "default")
    assert again.count == 2
    assert again.metadata.name == first.metadata.name


async def test_a_rejected_event_does_not_stop_the_broadcaster(
    api_server: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    ghost = ConfigMap(metadata=ObjectMeta(name="g", namespace="no-such-namespace", uid="u"))
    async with broadcasting(api_server) as (client, broadcaster, recorder):
        recorder.event(ghost, "Warning", "Lost", "its namespace does not exist")
        cm = await client.api(ConfigMap, "default").create(
            ConfigMap(metadata=ObjectMeta(name="ok"))
        )
        recorder.event(cm, "Normal", "Fine", "written")
        await settle(broadcaster)
        reasons = [e.reason for e in await events_in(client, "default")]
    assert reasons == ["Fine"]
    assert "server rejected event Warning Lost" in caplog.text
