"""DeltaFIFO: per-key order, delete dedup, Replace tombstones, resync, has_synced (F1-F12)."""

from __future__ import annotations

import anyio
import pytest

from kcm.informers import Delta, DeltaFIFO, DeltaType, Indexer
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap
from tests.unit.informers.inf_fakes import cm

A = ObjectKey("default", "a")
B = ObjectKey("default", "b")
C = ObjectKey("default", "c")


def kinds(deltas: list[Delta[ConfigMap]]) -> list[tuple[str, str | None, bool]]:
    return [
        (d.type.value, d.object.metadata.resource_version, d.final_state_unknown) for d in deltas
    ]


def drain(fifo: DeltaFIFO[ConfigMap]) -> list[tuple[ObjectKey, list[Delta[ConfigMap]], bool]]:
    out = []
    while (item := fifo.pop()) is not None:
        out.append(item)
    return out


def test_keys_queued_once_in_first_enqueue_order_deltas_kept() -> None:
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO()
    fifo.add(cm("a", 1))
    fifo.add(cm("b", 2))
    fifo.update(cm("a", 3))
    fifo.update(cm("a", 4))
    assert fifo.keys() == [A, B]
    key, deltas, initial = fifo.pop()  # type: ignore[misc]
    assert key == A
    assert not initial
    # consecutive updates are all kept (F6)
    assert kinds(deltas) == [
        ("Added", "1", False),
        ("Updated", "3", False),
        ("Updated", "4", False),
    ]
    fifo.update(cm("a", 5))
    assert fifo.keys() == [B, A]  # re-queued at the back after its pop
    assert fifo.has_synced  # an add came first (F10)


def test_delete_ignored_for_unknown_keys_and_deduplicated() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO(known_objects=idx)
    fifo.delete(cm("zz"))
    assert len(fifo) == 0  # neither known nor pending (F5)
    idx.add(cm("a", 1))
    fifo.delete(cm("a", 2))
    fifo.delete(cm("a", 3))
    assert kinds(fifo.pending(A)) == [("Deleted", "2", False)]
    # Without known objects a delete needs a pending delta.
    bare: DeltaFIFO[ConfigMap] = DeltaFIFO()
    bare.delete(cm("a"))
    assert len(bare) == 0


def test_dedup_keeps_the_real_final_state_over_a_tombstone() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    idx.add(cm("a", 1))
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO(known_objects=idx)
    fifo.replace([])  # tombstone for a
    assert kinds(fifo.pending(A)) == [("Deleted", "1", True)]
    fifo.delete(cm("a", 4))  # the watch delivers the real delete late
    assert kinds(fifo.pending(A)) == [("Deleted", "4", False)]
    fifo.replace([])  # a second tombstone does not replace the real one
    assert kinds(fifo.pending(A)) == [("Deleted", "4", False)]


def test_replace_emits_replaced_and_tombstones_for_queued_and_cached() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    idx.add(cm("a", 1))  # cached, missing from the list
    idx.add(cm("b", 1))  # cached, listed again
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO(known_objects=idx)
    fifo.add(cm("c", 2))  # queued only, missing from the list (B10: a ghost)
    fifo.replace([cm("b", 3)])
    got = {key: kinds(deltas) for key, deltas, _ in drain(fifo)}
    assert got == {
        C: [("Added", "2", False), ("Deleted", "2", True)],
        B: [("Replaced", "3", False)],
        A: [("Deleted", "1", True)],
    }


def test_first_replace_sets_initial_population() -> None:
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO(known_objects=Indexer())
    assert not fifo.has_synced
    fifo.replace([cm("a"), cm("b")])
    assert not fifo.has_synced
    first = fifo.pop()
    assert first is not None
    assert first[2] is True
    assert not fifo.has_synced
    second = fifo.pop()
    assert second is not None
    assert second[2] is True
    assert fifo.has_synced
    fifo.add(cm("c"))
    third = fifo.pop()
    assert third is not None
    assert third[2] is False


def test_empty_first_replace_is_synced() -> None:
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO()
    fifo.replace([])
    assert fifo.has_synced


def test_resync_skips_keys_with_pending_deltas() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    idx.add(cm("a", 1))
    idx.add(cm("b", 1))
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO(known_objects=idx)
    fifo.update(cm("a", 2))
    fifo.resync()
    assert kinds(fifo.pending(A)) == [("Updated", "2", False)]
    assert kinds(fifo.pending(B)) == [("Sync", "1", False)]
    DeltaFIFO[ConfigMap]().resync()  # no known objects: a no-op


@pytest.mark.anyio
async def test_wait_wakes_on_first_item() -> None:
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO()
    woke = []

    async def waiter() -> None:
        await fifo.wait()
        woke.append(len(fifo))

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        assert woke == []
        fifo.add(cm("a"))
    assert woke == [1]
    await fifo.wait()  # not empty: returns at once


@pytest.mark.anyio
async def test_wait_for_room_holds_the_producer_above_the_high_water_mark() -> None:
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO(high_water_mark=2)
    fifo.replace([cm(f"o{i}") for i in range(5)])
    resumed_at: list[int] = []

    async def producer() -> None:
        await fifo.wait_for_room()
        resumed_at.append(len(fifo))
        fifo.update(cm("o9", 2))  # writing never blocks

    async with anyio.create_task_group() as tg:
        tg.start_soon(producer)
        await anyio.wait_all_tasks_blocked()
        fifo.pop()
        fifo.pop()
        await anyio.wait_all_tasks_blocked()
        assert resumed_at == []  # 3 keys queued, above the mark
        fifo.pop()
        await anyio.wait_all_tasks_blocked()
    assert resumed_at == [2]
    assert [key.name for key, _, _ in drain(fifo)] == ["o3", "o4", "o9"]  # nothing dropped


@pytest.mark.anyio
async def test_wait_for_room_without_a_mark_only_yields() -> None:
    fifo: DeltaFIFO[ConfigMap] = DeltaFIFO()
    fifo.replace([cm(f"o{i}") for i in range(100)])
    with anyio.fail_after(1):
        await fifo.wait_for_room()
    assert len(fifo) == 100


def test_delta_types_are_client_go_names() -> None:
    assert [t.value for t in DeltaType] == ["Added", "Updated", "Deleted", "Replaced", "Sync"]
