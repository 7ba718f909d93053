"""What the EndpointSlice writers share: the slice event handler
(:class:`EndpointSliceEvents`), the queue's rate limiter and the writes of a sync
(:func:`write_endpoint_slices`)."""

from __future__ import annotations

from typing import Any, cast

import msgspec
import pytest

from kcm.client import Api
from kcm.controllerkit import (
    EndpointSliceEvents,
    EndpointSliceTracker,
    StaleSliceSyncs,
    endpoint_slice_rate_limiter,
    write_endpoint_slices,
)
from kcm.errors import Forbidden, StatusCause
from kcm.models import ObjectKey
from kcm.models.discovery_v1 import EndpointSlice
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock

OURS = "endpointslice-controller.k8s.io"
WEB = ObjectKey("default", "web")


def _slice(
    name: str = "web-1",
    *,
    service: str = "web",
    manager: str = OURS,
    generation: int = 1,
    uid: str = "u1",
) -> EndpointSlice:
    return EndpointSlice(
        address_type="IPv4",
        metadata=ObjectMeta(
            name=name,
            namespace="default",
            uid=uid,
            generation=generation,
            labels={
                "kubernetes.io/service-name": service,
                "endpointslice.kubernetes.io/managed-by": manager,
            },
        ),
    )


def _handler() -> tuple[EndpointSliceEvents, EndpointSliceTracker, list[str], list[ObjectKey]]:
    tracker = EndpointSliceTracker()
    queued: list[str] = []
    added: list[ObjectKey] = []
    stale = StaleSliceSyncs(added.append)
    stale.stale(WEB)  # a sync of web waits for the cache
    events = EndpointSliceEvents(
        OURS, tracker, stale, lambda s: queued.append((s.metadata.labels or {})[_SERVICE])
    )
    return events, tracker, queued, added


_SERVICE = "kubernetes.io/service-name"


def test_a_slice_it_wrote_itself_syncs_nothing_but_a_newer_one_does() -> None:
    events, tracker, queued, added = _handler()
    tracker.update(_slice())
    assert list(events.create_keys(_slice(), is_in_initial_list=False)) == []
    assert queued == []
    assert added == [WEB]  # the cache moved: the waiting sync runs now
    events.update_keys(_slice(), _slice(generation=2))  # a hand edit
    assert queued == ["web"]


def test_slices_of_another_manager_are_ignored_unless_the_label_moves() -> None:
    events, _, queued, _ = _handler()
    other = _slice(manager="someone-else")
    events.create_keys(other, is_in_initial_list=False)
    events.update_keys(other, _slice(manager="someone-else", generation=2))
    assert queued == []
    events.update_keys(other, _slice())  # managed-by changed to ours
    assert queued == ["web"]
    queued.clear()
    events.update_keys(other, _slice(manager="someone-else", service="api"))
    assert queued == ["api", "web"]  # service-name changed: both Services, new first


def test_only_an_unexpected_deletion_of_a_tracked_slice_syncs() -> None:
    events, tracker, queued, _ = _handler()
    events.delete_keys(_slice(), final_state_unknown=False)  # never tracked
    tracker.expect_deletion(_slice())
    events.delete_keys(_slice(), final_state_unknown=False)  # our own delete
    assert queued == []
    tracker.update(_slice())
    events.delete_keys(_slice(), final_state_unknown=False)  # someone else's
    assert queued == ["web"]


def test_the_rate_limiter_doubles_from_one_second_per_key() -> None:
    limiter = endpoint_slice_rate_limiter(clock=FakeClock())
    assert [limiter.when("a") for _ in range(3)] == [1.0, 2.0, 4.0]
    assert limiter.when("b") == 1.0


class _FakeSlices:
    def __init__(self, refuse_create: Exception | None = None) -> None:
        self.calls: list[str] = []
        self._refuse_create = refuse_create

    async def create(self, obj: EndpointSlice) -> EndpointSlice:
        self.calls.append(f"create {obj.metadata.name}")
        if self._refuse_create is not None:
            raise self._refuse_create
        return msgspec.structs.replace(
            obj, metadata=msgspec.structs.replace(obj.metadata, uid=f"uid-{obj.metadata.name}")
        )

    async def update(self, original: EndpointSlice, obj: EndpointSlice) -> EndpointSlice:
        self.calls.append(f"update {obj.metadata.name}")
        meta = msgspec.structs.replace(obj.metadata, generation=(obj.metadata.generation or 0) + 1)
        return msgspec.structs.replace(obj, metadata=meta)

    async def delete(self, name: str) -> None:
        self.calls.append(f"delete {name}")


def _api(fake: _FakeSlices) -> Api[EndpointSlice]:
    return cast("Api[EndpointSlice]", cast(Any, fake))


@pytest.mark.anyio
async def test_writes_create_then_update_then_delete_and_track_each() -> None:
    fake, tracker = _FakeSlices(), EndpointSliceTracker()
    new, old, gone = _slice("web-new", uid=""), _slice("web-1"), _slice("web-2", uid="u2")
    await write_endpoint_slices(
        _api(fake), tracker, create=[new], update=[(old, old)], delete=[gone]
    )
    assert fake.calls == ["create web-new", "update web-1", "delete web-2"]
    assert not tracker.should_sync(_slice("web-new", uid="uid-web-new"))  # its own create
    assert not tracker.should_sync(_slice("web-1", generation=2))  # its own update
    assert tracker.handle_deletion(gone)  # its own delete


async def _one_create_one_update(
    refuse_create: Exception | None = None, *, owner_deleting: bool = False
) -> list[str]:
    fake = _FakeSlices(refuse_create)
    old = _slice("web-1")
    await write_endpoint_slices(
        _api(fake),
        EndpointSliceTracker(),
        create=[_slice("web-new")],
        update=[(old, old)],
        delete=[],
        owner_deleting=owner_deleting,
    )
    return fake.calls


@pytest.mark.anyio
async def test_no_creates_for_a_deleting_owner_and_a_terminating_namespace_ends_quietly() -> None:
    assert await _one_create_one_update(owner_deleting=True) == ["update web-1"]
    terminating = Forbidden("ns terminating", causes=[StatusCause(reason="NamespaceTerminating")])
    # nothing after the refused create
    assert await _one_create_one_update(terminating) == ["create web-new"]
    with pytest.raises(Forbidden):
        await _one_create_one_update(Forbidden("no"))
