"""MultiLock semantics (over in-memory locks) and the record encodings of the real locks."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from kcm.errors import ConfigError, NotFound
from kcm.leaderelection import (
    UNKNOWN_LEADER,
    InMemoryLock,
    InMemoryLockStore,
    LeaderElectionRecord,
    MultiLock,
)
from kcm.leaderelection._lease_lock import (
    lease_spec_from_record,
    record_from_annotation,
    record_from_lease_spec,
    record_to_annotation,
)
from kcm.models import encode
from kcm.models.coordination_v1 import Lease, LeaseSpec

pytestmark = pytest.mark.anyio

WHEN = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def rec(holder: str) -> LeaderElectionRecord:
    return LeaderElectionRecord(
        holder_identity=holder, lease_duration_seconds=15, acquire_time=WHEN, renew_time=WHEN
    )


def multi(primary: InMemoryLockStore, secondary: InMemoryLockStore, who: str) -> MultiLock:
    return MultiLock(InMemoryLock(primary, who), InMemoryLock(secondary, who))


async def test_multilock_tolerates_a_missing_secondary_held_by_someone_else() -> None:
    p, s = InMemoryLockStore(), InMemoryLockStore()
    p.record = rec("old")
    got, raw = await multi(p, s, "new").get()
    assert got.holder_identity == "old"
    assert raw == msgspec.json.encode(p.record)
    p.record = rec("new")
    with pytest.raises(NotFound):
        await multi(p, s, "new").get()  # we hold the primary: the secondary must exist


async def test_multilock_reports_unknown_leader_when_holders_differ() -> None:
    p, s = InMemoryLockStore(), InMemoryLockStore()
    p.record, s.record = rec("a"), rec("b")
    got, raw = await multi(p, s, "c").get()
    assert got.holder_identity == UNKNOWN_LEADER
    assert raw.count(b"holderIdentity") == 2


async def test_multilock_create_and_update_write_both() -> None:
    p, s = InMemoryLockStore(), InMemoryLockStore()
    p.record = rec("x")  # AlreadyExists on the primary is tolerated
    lock = multi(p, s, "me")
    await lock.create(rec("me"))
    assert s.record == rec("me")
    s.record = None  # a secondary deleted behind our back is re-created on update
    await lock.primary.get()
    await lock.update(rec("me"))
    assert p.record == rec("me")
    assert s.record == rec("me")
    assert lock.identity == "me"
    assert lock.describe() == "memory/lock"


def test_multilock_needs_one_identity() -> None:
    store = InMemoryLockStore()
    with pytest.raises(ConfigError):
        MultiLock(InMemoryLock(store, "a"), InMemoryLock(store, "b"))


def test_lease_spec_round_trip_writes_microtime() -> None:
    spec = lease_spec_from_record(rec("a"), LeaseSpec(strategy="OldestEmulationVersion"))
    assert spec.strategy == "OldestEmulationVersion"
    assert record_from_lease_spec(spec) == rec("a")
    wire = msgspec.json.decode(encode(Lease(spec=spec)))
    assert wire["spec"]["renewTime"] == "2026-03-01T12:00:00.123456Z"
    whole = lease_spec_from_record(
        msgspec.structs.replace(rec("a"), renew_time=WHEN.replace(microsecond=0))
    )
    assert msgspec.json.decode(encode(Lease(spec=whole)))["spec"]["renewTime"] == (
        "2026-03-01T12:00:00.000000Z"
    )
    assert record_from_lease_spec(None) == LeaderElectionRecord()


def test_annotation_matches_client_go_and_tolerates_garbage() -> None:
    text = record_to_annotation(rec("a"))
    assert text == (
        '{"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":"2026-03-01T12:00:00Z",'
        '"renewTime":"2026-03-01T12:00:00Z","leaderTransitions":0}'
    )
    assert record_from_annotation(text) == msgspec.structs.replace(
        rec("a"), acquire_time=WHEN.replace(microsecond=0), renew_time=WHEN.replace(microsecond=0)
    )
    assert record_from_annotation("not json") == LeaderElectionRecord()
