"""LeaseLock, ConfigMapLock and MultiLock against the embedded API server over real HTTP."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import AlreadyExists, Conflict, NotFound
from kcm.leaderelection import (
    LEADER_ANNOTATION,
    UNKNOWN_LEADER,
    ConfigMapLock,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    MultiLock,
)
from kcm.models.coordination_v1 import Lease
from kcm.testing import FakeClock, client_config_for

pytestmark = pytest.mark.anyio

WHEN = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def record(holder: str, transitions: int = 0) -> LeaderElectionRecord:
    return LeaderElectionRecord(
        holder_identity=holder,
        lease_duration_seconds=15,
        acquire_time=WHEN,
        renew_time=WHEN,
        leader_transitions=transitions,
    )


@pytest.fixture
async def client() -> AsyncIterator[ApiClient]:
    async with ApiServer() as server, ApiClient(client_config_for(server)) as c:
        yield c


async def test_lease_lock_roundtrip_and_conflict(client: ApiClient) -> None:
    a = LeaseLock(client, "kcm", "default", identity="a")
    b = LeaseLock(client, "kcm", "default", identity="b")
    with pytest.raises(NotFound):
        await a.get()
    with pytest.raises(RuntimeError, match="not initialized"):
        await a.update(record("a"))
    await a.create(record("a"))
    with pytest.raises(AlreadyExists):
        await b.create(record("b"))
    got, raw = await b.get()
    assert got == record("a")
    assert b"holderIdentity" in raw
    renewed = msgspec.structs.replace(record("a"), renew_time=datetime.now(UTC))
    await a.update(renewed)
    with pytest.raises(Conflict):
        await b.update(record("b", 1))  # b's copy is stale: optimistic concurrency
    got, raw2 = await b.get()
    assert got.renew_time == renewed.renew_time  # microseconds survive the round trip
    assert raw2 != raw
    await b.update(record("b", 1))
    with pytest.raises(Conflict):
        await a.update(record("a"))
    lease = await client.api(Lease, namespace="default").get("kcm")
    assert lease.spec is not None
    assert lease.spec.holder_identity == "b"
    assert lease.spec.lease_transitions == 1
    assert lease.spec.lease_duration_seconds == 15
    assert a.describe() == "default/kcm"


async def test_lease_lock_writes_microtime_with_six_digits(client: ApiClient) -> None:
    lock = LeaseLock(client, "micro", "default", identity="a")
    await lock.create(record("a"))
    resp = await client.http.get("/apis/coordination.k8s.io/v1/namespaces/default/leases/micro")
    spec = resp.json()["spec"]
    assert spec["renewTime"] == "2026-03-01T12:00:00.000000Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", spec["acquireTime"])
    assert spec["holderIdentity"] == "a"
    assert spec["leaseTransitions"] == 0


async def test_lease_lock_keeps_fields_the_record_does_not_cover(client: ApiClient) -> None:
    lock = LeaseLock(client, "keep", "default", identity="a")
    await lock.create(record("a"))
    leases = client.api(Lease, namespace="default")
    lease = await leases.get("keep")
    assert lease.spec is not None
    await leases.replace(
        msgspec.structs.replace(lease, spec=msgspec.structs.replace(lease.spec, strategy="Old"))
    )
    await lock.get()
    await lock.update(record("a"))
    after = await leases.get("keep")
    assert after.spec is not None
    assert after.spec.strategy == "Old"


async def test_locks_keep_what_another_tool_stored(client: ApiClient) -> None:
    """A renewal must not erase what another tool stored: no PUT-back of a rebuilt object.
    (The server keeps only the fields of its kinds, as kube-apiserver does, so the other
    tool's mark is a label rather than a field from a newer server.)"""
    lease_lock = LeaseLock(client, "future", "default", identity="a")
    cm_lock = ConfigMapLock(client, "future", "default", identity="a")
    await lease_lock.create(record("a"))
    await cm_lock.create(record("a"))
    for path in (
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/future",
        "/api/v1/namespaces/default/configmaps/future",
    ):
        resp = await client.http.patch(
            path,
            content=b'{"metadata": {"labels": {"other-tool": "keep"}}}',
            headers={"content-type": "application/merge-patch+json"},
        )
        assert resp.status_code == 200
    for lock in (lease_lock, cm_lock):
        await lock.get()
        await lock.update(msgspec.structs.replace(record("a"), renew_time=datetime.now(UTC)))
    for path in (
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/future",
        "/api/v1/namespaces/default/configmaps/future",
    ):
        labels = (await client.http.get(path)).json()["metadata"]["labels"]
        assert labels == {"other-tool": "keep"}


async def test_configmap_lock_uses_the_leader_annotation(client: ApiClient) -> None:
    a = ConfigMapLock(client, "kcm", "kube-system", identity="a")
    await a.create(record("a"))
    resp = await client.http.get("/api/v1/namespaces/kube-system/configmaps/kcm")
    annotation = resp.json()["metadata"]["annotations"][LEADER_ANNOTATION]
    assert msgspec.json.decode(annotation) == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-03-01T12:00:00Z",
        "renewTime": "2026-03-01T12:00:00Z",
        "leaderTransitions": 0,
    }
    b = ConfigMapLock(client, "kcm", "kube-system", identity="b")
    got, raw = await b.get()
    assert got == record("a")
    assert raw == annotation.encode()
    await a.update(msgspec.structs.replace(record("a"), leader_transitions=5))
    with pytest.raises(Conflict):
        await b.update(record("b", 1))


async def test_multilock_migration_from_configmap_to_lease(client: ApiClient) -> None:
    cfg = LeaderElectionConfig(lease_duration=1.5, renew_deadline=1, retry_period=0.2)
    old = ConfigMapLock(client, "kcm", "kube-system", identity="old")
    await old.create(msgspec.structs.replace(record("old"), lease_duration_seconds=1))
    new = MultiLock(
        ConfigMapLock(client, "kcm", "kube-system", identity="new"),
        LeaseLock(client, "kcm", "kube-system", identity="new"),
    )
    # The old replica (ConfigMap only) holds: the missing Lease is tolerated.
    got, _ = await new.get()
    assert got.holder_identity == "old"

    leading = anyio.Event()

    async def work() -> None:
        leading.set()
        await anyio.sleep_forever()

    elector = LeaderElector(new, cfg, on_started_leading=work)
    async with anyio.create_task_group() as tg:
        tg.start_soon(elector.run)
        with anyio.fail_after(10):
            await leading.wait()  # the old holder stopped renewing: taken over after expiry
        tg.cancel_scope.cancel()
    cm_record, _ = await old.get()
    lease_record, _ = await LeaseLock(client, "kcm", "kube-system", identity="x").get()
    assert cm_record.holder_identity == lease_record.holder_identity == "new"
    assert cm_record.leader_transitions == 1

    # Holders that disagree are reported as unknown: everyone waits.
    await old.update(record("old", 2))
    got, raw = await new.get()
    assert got.holder_identity == UNKNOWN_LEADER
    assert raw.count(b"holderIdentity") == 2


async def test_elector_over_http_release_hands_over(client: ApiClient) -> None:
    """A released lease is taken at the next retry, not after the lease expires.

    The electors run on a FakeClock; the lease round trips are real HTTP. Virtual time moves in
    50 ms steps with a real pause between them so responses land; a 60 s lease makes "waited for
    expiry" and "took it at a retry" (<= 0.44 s) impossible to confuse.
    """
    clock = FakeClock()
    cfg = LeaderElectionConfig(
        lease_duration=60, renew_deadline=40, retry_period=0.2, release_on_cancel=True
    )
    order: list[str] = []
    scopes = {name: anyio.CancelScope() for name in "ab"}
    stopped = {name: anyio.Event() for name in "ab"}

    def elector(name: str) -> LeaderElector:
        async def work() -> None:
            order.append(f"{name}+")
            try:
                await anyio.sleep_forever()
            finally:
                order.append(f"{name}-")

        lock = LeaseLock(client, "handover", "default", identity=name)
        return LeaderElector(lock, cfg, on_started_leading=work, clock=clock)

    electors = {name: elector(name) for name in "ab"}

    async def run(name: str) -> None:
        with scopes[name]:
            await electors[name].run()
        stopped[name].set()

    async def advance_until(done: Callable[[], bool], limit: float) -> float:
        """Virtual seconds until ``done()``; fails past ``limit`` virtual seconds."""
        begin = clock.monotonic()
        with anyio.fail_after(30):
            while not done():
                assert clock.monotonic() - begin < limit, order
                await clock.advance(0.05)
                await anyio.sleep(0.002)  # real time for the HTTP round trips in flight
        return clock.monotonic() - begin

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "a")
        await advance_until(lambda: electors["a"].is_leader, limit=5)
        tg.start_soon(run, "b")
        with pytest.raises(AssertionError):  # b retries for 10 s and never takes a held lease
            await advance_until(lambda: "b+" in order, limit=10)
        assert order == ["a+"]
        scopes["a"].cancel()
        with anyio.fail_after(10):
            await stopped["a"].wait()  # a released the lease on its way out
        handover = await advance_until(lambda: "b+" in order, limit=30)
        assert handover < 30  # a retry, not the 60 s lease running out
        assert order == ["a+", "a-", "b+"]
        tg.cancel_scope.cancel()
