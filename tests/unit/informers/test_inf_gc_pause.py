"""The GC pause during LISTs: per-page freeze, restored state, stands aside when not its own."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from kcm.informers import Backoff, SharedIndexInformer, _gc_pause
from kcm.informers._gc_pause import gc_paused_for_list, list_page_decoded
from kcm.models import ObjectList
from kcm.models.core_v1 import ConfigMap
from kcm.testing import FakeClock
from tests.unit.informers.inf_fakes import ListStep, ScriptedListerWatcher, WatchStep, cm


@pytest.fixture(autouse=True)
def _clean_gc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_gc_pause, "MIN_FREEZE_OBJECTS", 2)
    assert gc.get_freeze_count() == 0, "another test left the heap frozen"
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def _state() -> tuple[bool, tuple[int, int, int], int]:
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


def test_pages_are_frozen_during_the_list_and_everything_is_restored_after() -> None:
    before = _state()
    keep = []
    with gc_paused_for_list():
        keep.append([[1], [2]])  # tracked objects decoded "in this page"
        list_page_decoded(2)
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()  # the collector keeps running for everything else
    assert _state() == before
    assert gc.get_freeze_count() == 0


def test_small_lists_never_freeze() -> None:
    with gc_paused_for_list():
        list_page_decoded(1)
        assert gc.get_freeze_count() == 0
    with gc_paused_for_list():
        list_page_decoded(1)
        list_page_decoded(1)  # the threshold is reached over two pages
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_the_heap_is_unfrozen_only_when_the_last_list_ends() -> None:
    with gc_paused_for_list():
        with gc_paused_for_list():
            list_page_decoded(2)
        assert gc.get_freeze_count() > 0  # the outer list is still decoding
        list_page_decoded(2)
    assert gc.get_freeze_count() == 0


def test_an_application_that_froze_its_heap_is_left_alone() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    # The count only ever drops by itself (a frozen object freed, e.g. by another thread of the
    # test process): a freeze would add ``keep``, an unfreeze would empty it.
    with gc_paused_for_list():
        keep = [[1] for _ in range(100)]
        list_page_decoded(2)
        assert gc.get_freeze_count() < frozen + len(keep)
    assert gc.get_freeze_count() > frozen // 2  # not unfrozen behind the application's back


def test_no_op_when_gc_is_disabled_or_the_option_is_off() -> None:
    gc.disable()
    with gc_paused_for_list():
        list_page_decoded(2)
        assert gc.get_freeze_count() == 0
    assert not gc.isenabled()
    gc.enable()
    with gc_paused_for_list(enabled=False):
        list_page_decoded(2)
        assert gc.get_freeze_count() == 0


def test_an_error_mid_list_still_restores() -> None:
    def failing_list() -> None:
        with gc_paused_for_list():
            list_page_decoded(2)
            raise RuntimeError("list failed")

    with pytest.raises(RuntimeError):
        failing_list()
    assert gc.get_freeze_count() == 0


class _Spy(ScriptedListerWatcher):
    """Records the freeze count seen by each list call and by the transform."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.freeze_counts: list[int] = []

    async def list(self, **kwargs: Any) -> ObjectList[ConfigMap]:
        self.freeze_counts.append(gc.get_freeze_count())
        return await super().list(**kwargs)


def _world(pause: bool) -> tuple[_Spy, SharedIndexInformer[ConfigMap], list[int]]:
    clock = FakeClock()
    lw = _Spy(
        clock,
        [
            ListStep([cm("a", 1)], rv="9", continue_="p2"),
            ListStep([cm("b", 2)], rv="9", continue_="p3"),
            ListStep([cm("c", 3)], rv="9"),
            WatchStep(hold=True),
        ],
    )
    calls_at_transform: list[int] = []

    def transform(obj: ConfigMap) -> ConfigMap:
        calls_at_transform.append(len(lw.calls))
        return obj

    informer: SharedIndexInformer[ConfigMap] = SharedIndexInformer(
        lw,
        clock=clock,
        rng=random.Random(1),
        backoff=Backoff(jitter=0, clock=clock),
        page_size=1,
        transform=transform,
        pause_gc_during_list=pause,
    )
    return lw, informer, calls_at_transform


@pytest.mark.anyio
@pytest.mark.parametrize("pause", [True, False])
async def test_informer_list_pauses_gc_per_page_and_transforms_page_by_page(
    pause: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_gc_pause, "MIN_FREEZE_OBJECTS", 1)  # freeze after every 1-pod page
    before = _state()
    lw, informer, calls_at_transform = _world(pause)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(informer.run)
            assert sorted(o.metadata.name or "" for o in informer.indexer.list()) == ["a", "b", "c"]
            assert _state() == before  # synced: nothing left frozen or changed
            tg.cancel_scope.cancel()
    # Page 1 is frozen before page 2 is requested (only with the option on).
    assert (lw.freeze_counts[1] > 0) is pause
    assert (lw.freeze_counts[2] > 0) is pause
    # Each page is transformed as it arrives, before the next page is requested.
    assert calls_at_transform == [1, 2, 3]
