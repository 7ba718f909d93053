"""Reflector against a scripted ListerWatcher on a fake clock (R1-R26)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
import msgspec
import pytest

from kcm.errors import (
    BadRequest,
    Forbidden,
    InternalError,
    NotFound,
    RequestTimeout,
    ResourceExpired,
    ResourceVersionTooLarge,
    TooManyRequests,
    TransportError,
    VeryShortWatchError,
    WatchDecodeError,
    WatchListTimeoutError,
)
from kcm.informers import Backoff, Reflector
from kcm.informers._reflector import (
    WATCH_OUTCOME_ACTIONS,
    WatchAction,
    WatchOutcome,
    classify_watch_end,
)
from kcm.models.core_v1 import ConfigMap
from kcm.testing import FakeClock
from tests.unit.informers.inf_fakes import (
    ListStep,
    ScriptedListerWatcher,
    WatchStep,
    bookmark,
    cm,
    ev,
)

pytestmark = pytest.mark.anyio


class RecordingStore:
    def __init__(self) -> None:
        self.ops: list[tuple[Any, ...]] = []

    def add(self, obj: ConfigMap, /) -> None:
        self.ops.append(("add", obj.metadata.name, obj.metadata.resource_version))

    def update(self, obj: ConfigMap, /) -> None:
        self.ops.append(("update", obj.metadata.name, obj.metadata.resource_version))

    def delete(self, obj: ConfigMap, /) -> None:
        self.ops.append(("delete", obj.metadata.name, obj.metadata.resource_version))

    def replace(self, objects: Iterable[ConfigMap], /) -> None:
        self.ops.append(("replace", sorted(o.metadata.name or "" for o in objects)))

    def resync(self) -> None:
        self.ops.append(("resync",))

    def bookmark(self) -> None:
        pass

    async def wait_for_room(self) -> None:
        await anyio.lowlevel.checkpoint()


class Harness:
    def __init__(self, *steps: ListStep | WatchStep, **kwargs: Any) -> None:
        self.clock = FakeClock()
        self.lw = ScriptedListerWatcher(self.clock, steps)
        self.store = RecordingStore()
        self.errors: list[Exception] = []
        kwargs.setdefault("backoff", Backoff(jitter=0, clock=self.clock))
        self.reflector: Reflector[ConfigMap] = Reflector(
            self.lw,
            self.store,
            clock=self.clock,
            rng=random.Random(1),
            watch_error_handler=self.errors.append,
            **kwargs,
        )
        self.call_times: list[float] = []

    async def play(
        self, *, limit: float = 10_000, then: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """Run the reflector on virtual time until the script is consumed."""
        start = self.clock.monotonic()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                await tg.start(self.reflector.run)
                while True:
                    await anyio.wait_all_tasks_blocked()
                    if self.lw.done:
                        break
                    deadline = self.clock.next_deadline()
                    assert deadline is not None, f"stuck; remaining script: {list(self.lw.steps)}"
                    assert deadline - start <= limit, "script not consumed in time"
                    await self.clock.advance(deadline - self.clock.monotonic())
                await anyio.wait_all_tasks_blocked()
                if then is not None:
                    await then()
                tg.cancel_scope.cancel()
        assert self.lw.failures == []

    def calls(self) -> list[tuple[str, str | None]]:
        return [(kind, kw.get("resource_version")) for kind, kw in self.lw.calls]


# -- the outcome table (R17) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "opened", "events", "duration", "ise_ok", "outcome"),
    [
        (None, True, 3, 0.1, False, WatchOutcome.CLOSED),
        (None, True, 0, 5.0, False, WatchOutcome.CLOSED),
        (None, True, 0, 0.5, False, WatchOutcome.VERY_SHORT),
        (RequestTimeout("idle"), True, 2, 90.0, False, WatchOutcome.CLOSED),
        (TransportError("reset"), True, 0, 0.2, False, WatchOutcome.VERY_SHORT),
        (TransportError("refused"), False, 0, 0.0, False, WatchOutcome.REQUEST_RETRYABLE),
        (RequestTimeout("slow"), False, 0, 0.0, False, WatchOutcome.REQUEST_RETRYABLE),
        (TooManyRequests("slow down"), False, 0, 0.0, False, WatchOutcome.REQUEST_RETRYABLE),
        (Forbidden("no"), False, 0, 0.0, False, WatchOutcome.REQUEST_FAILED),
        (ResourceExpired("too old"), True, 0, 0.0, False, WatchOutcome.EXPIRED),
        (ResourceExpired("too old"), False, 0, 0.0, False, WatchOutcome.EXPIRED),
        (TooManyRequests("event"), True, 1, 1.0, False, WatchOutcome.ERROR_429),
        (InternalError("ise"), True, 1, 1.0, True, WatchOutcome.ERROR_500_IN_WINDOW),
        (InternalError("ise"), True, 1, 1.0, False, WatchOutcome.ERROR_OTHER),
        (NotFound("gone"), True, 1, 1.0, False, WatchOutcome.ERROR_OTHER),
        (WatchDecodeError("bad line"), True, 1, 1.0, False, WatchOutcome.ERROR_OTHER),
        (RuntimeError("bug"), True, 1, 1.0, False, WatchOutcome.ERROR_OTHER),
    ],
)
def test_classify_watch_end(
    exc: Exception | None,
    opened: bool,
    events: int,
    duration: float,
    ise_ok: bool,
    outcome: WatchOutcome,
) -> None:
    got = classify_watch_end(
        exc, opened=opened, events=events, duration=duration, internal_error_retry_ok=ise_ok
    )
    assert got is outcome


@pytest.mark.parametrize(
    ("outcome", "action", "report"),
    [
        (WatchOutcome.CLOSED, WatchAction.REWATCH, False),
        (WatchOutcome.VERY_SHORT, WatchAction.RELIST, True),
        (WatchOutcome.REQUEST_RETRYABLE, WatchAction.BACKOFF_REWATCH, True),
        (WatchOutcome.REQUEST_FAILED, WatchAction.RELIST, True),
        (WatchOutcome.EXPIRED, WatchAction.RELIST, False),
        (WatchOutcome.ERROR_429, WatchAction.BACKOFF_REWATCH, True),
        (WatchOutcome.ERROR_500_IN_WINDOW, WatchAction.BACKOFF_REWATCH, True),
        (WatchOutcome.ERROR_OTHER, WatchAction.RELIST, True),
    ],
)
def test_r17_table_rows(outcome: WatchOutcome, action: WatchAction, report: bool) -> None:
    assert WATCH_OUTCOME_ACTIONS[outcome] == (action, report)


def test_r17_table_is_complete() -> None:
    assert set(WATCH_OUTCOME_ACTIONS) == set(WatchOutcome)


# -- relist RV and page size (R7, R8) -----------------------------------------------------


def test_relist_rv_and_page_size_rules() -> None:
    h = Harness()
    r = h.reflector
    assert r.relist_resource_version() == "0"
    assert r.list_page_size("0") == 500
    assert r.list_page_size("") == 500
    assert r.list_page_size("42") == 0
    custom = Harness(page_size=7).reflector
    assert custom.list_page_size("42") == 7


def test_watch_timeout_is_random_in_min_to_twice_min() -> None:
    r = Harness().reflector
    timeouts = {r.watch_timeout() for _ in range(200)}
    assert min(timeouts) >= 300
    assert max(timeouts) < 600
    assert len(timeouts) > 50


# -- scripted runs -------------------------------------------------------------------------


async def test_list_then_watch_from_the_list_rv_with_bookmarks() -> None:
    h = Harness(
        ListStep([cm("a", 5), cm("b", 7)], rv="10", expect={"resource_version": "0", "limit": 500}),
        WatchStep(
            [ev("ADDED", cm("c", 11)), ev("MODIFIED", cm("a", 12)), bookmark(15)],
            hold=True,
            expect={"resource_version": "10", "allow_watch_bookmarks": True},
        ),
    )
    await h.play()
    assert h.store.ops == [("replace", ["a", "b"]), ("add", "c", "11"), ("update", "a", "12")]
    assert h.reflector.last_sync_resource_version == "15"  # bookmarks move the RV (R15)
    timeout = h.lw.calls[1][1]["timeout_seconds"]
    assert 300 <= timeout < 600
    assert h.errors == []


async def test_paged_list_concatenates_pages_and_keeps_first_rv() -> None:
    h = Harness(
        ListStep(
            [cm("a")], rv="10", continue_="t1", expect={"limit": 500, "resource_version": "0"}
        ),
        ListStep(
            [cm("b")], rv="11", continue_="t2", expect={"continue_": "t1", "resource_version": None}
        ),
        ListStep([cm("c")], rv="12", expect={"continue_": "t2"}),
        WatchStep(hold=True, expect={"resource_version": "10"}),
    )
    await h.play()
    assert h.store.ops == [("replace", ["a", "b", "c"])]
    assert h.reflector.last_sync_resource_version == "10"  # the first page's RV
    # An RV=0 list came back paginated: the watch cache is off, keep paging (R8: step 2).
    assert h.reflector.list_page_size("42") == 500


async def test_expired_continue_token_falls_back_to_one_full_list() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10", continue_="t1"),
        ListStep(error=ResourceExpired("continue expired")),
        ListStep([cm("a"), cm("b")], rv="13", expect={"limit": None, "resource_version": "0"}),
        WatchStep(hold=True, expect={"resource_version": "13"}),
    )
    await h.play()
    assert h.store.ops == [("replace", ["a", "b"])]
    assert h.reflector.last_sync_resource_version == "13"


async def test_normal_close_rewatches_from_last_rv_without_relisting() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep([ev("ADDED", cm("b", 11))], duration=300),
        WatchStep([], duration=400, expect={"resource_version": "11"}),
        WatchStep(hold=True, expect={"resource_version": "11"}),
    )
    await h.play()
    assert [k for k, _ in h.calls()] == ["list", "watch", "watch", "watch"]
    assert h.errors == []


async def test_expired_watch_relists_at_last_rv_after_one_backoff() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep([ev("ADDED", cm("b", 12)), ResourceExpired("too old resource version")]),
        ListStep([cm("a"), cm("b")], rv="20", expect={"resource_version": "12", "limit": None}),
        WatchStep(hold=True, expect={"resource_version": "20"}),
    )
    await h.play()
    assert h.errors == []  # 410 is routine, not reported
    assert h.store.ops[-1] == ("replace", ["a", "b"])
    assert h.reflector.last_sync_resource_version == "20"
    assert h.clock.monotonic() - 1000 == pytest.approx(0.8)  # exactly one backoff delay


async def test_list_410_at_last_rv_falls_back_to_consistent_read() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep([ev("ADDED", cm("b", 12)), ResourceExpired("too old")]),
        ListStep(error=ResourceExpired("too old"), expect={"resource_version": "12"}),
        # Retried at once with RV="" and the same pager settings, unpaginated (R10).
        ListStep([cm("b")], rv="30", expect={"resource_version": None, "limit": None}),
        WatchStep(hold=True, expect={"resource_version": "30"}),
    )
    await h.play()
    assert h.store.ops[-1] == ("replace", ["b"])
    assert h.reflector.relist_resource_version() == "30"  # the unavailable flag is cleared


async def test_too_large_rv_also_falls_back() -> None:
    h = Harness(
        ListStep(error=ResourceVersionTooLarge("too large resource version")),
        ListStep([cm("a")], rv="3", expect={"resource_version": None}),
        WatchStep(hold=True),
    )
    await h.play()
    assert h.store.ops == [("replace", ["a"])]
    assert h.reflector.last_sync_resource_version == "3"


async def test_very_short_watch_relists_after_backoff_and_reports() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep([], duration=0.2),
        ListStep([cm("a")], rv="10", expect={"resource_version": "10"}),
        WatchStep(hold=True),
    )
    await h.play()
    assert [type(e) for e in h.errors] == [VeryShortWatchError]
    assert [k for k, _ in h.calls()] == ["list", "watch", "list", "watch"]


async def test_connection_error_on_watch_backs_off_and_rewatches_same_rv() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep(open_error=TransportError("connection refused")),
        WatchStep(
            open_error=TransportError("connection refused"), expect={"resource_version": "10"}
        ),
        WatchStep(hold=True, expect={"resource_version": "10"}),
    )
    await h.play()
    assert [k for k, _ in h.calls()] == ["list", "watch", "watch", "watch"]
    assert h.clock.monotonic() - 1000 == pytest.approx(0.8 + 1.6)
    assert [type(e) for e in h.errors] == [TransportError, TransportError]


async def test_429_on_watch_honours_retry_after() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep(open_error=TooManyRequests("slow down", retry_after=7)),
        WatchStep(hold=True, expect={"resource_version": "10"}),
    )
    await h.play()
    assert h.clock.monotonic() - 1000 == pytest.approx(7)


async def test_500_event_relists_by_default_but_rewatches_within_window() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep([ev("ADDED", cm("b", 11)), InternalError("etcd hiccup")]),
        ListStep([cm("a"), cm("b")], rv="11"),
        WatchStep(hold=True),
    )
    await h.play()
    assert [k for k, _ in h.calls()] == ["list", "watch", "list", "watch"]
    h2 = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep([ev("ADDED", cm("b", 11)), InternalError("etcd hiccup")]),
        WatchStep(hold=True, expect={"resource_version": "11"}),
        max_internal_error_retry_duration=30,
    )
    await h2.play()
    assert [k for k, _ in h2.calls()] == ["list", "watch", "watch"]


async def test_malformed_line_is_reported_and_the_reflector_relists() -> None:
    h = Harness(
        ListStep([cm("a")], rv="10"),
        WatchStep([ev("ADDED", cm("b", 11)), WatchDecodeError("line 2 is not JSON")]),
        ListStep([cm("a"), cm("b")], rv="11", expect={"resource_version": "11"}),
        WatchStep(hold=True),
    )
    await h.play()
    assert len(h.errors) == 1
    assert isinstance(h.errors[0], WatchDecodeError)
    assert h.store.ops[-1] == ("replace", ["a", "b"])
    assert h.reflector.last_sync_resource_version == "11"


async def test_list_errors_back_off_exponentially_and_are_reported() -> None:
    steps: list[ListStep | WatchStep] = [ListStep(error=Forbidden("rbac")) for _ in range(8)]
    h = Harness(*steps, ListStep([cm("a")], rv="2"), WatchStep(hold=True))
    times: list[float] = []
    orig = h.lw.list

    async def timed_list(**kw: Any) -> Any:
        times.append(h.clock.monotonic() - 1000)
        return await orig(**kw)

    h.lw.list = timed_list  # type: ignore[method-assign]
    await h.play()
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(times)]
    assert gaps == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30]
    assert len(h.errors) == 8
    assert all(isinstance(e, Forbidden) for e in h.errors)
    assert h.reflector.last_error is None  # cleared by the successful list


async def test_resync_timer_asks_should_resync() -> None:
    answers = iter([True, False, True])
    h = Harness(
        ListStep([cm("a")], rv="1"),
        WatchStep(hold=True),
        resync_period=10,
        should_resync=lambda: next(answers),
    )
    seen: list[int] = []

    async def tick() -> None:
        for _ in range(3):
            await h.clock.advance(10)
            seen.append(h.store.ops.count(("resync",)))

    await h.play(then=tick)
    assert seen == [1, 1, 2]


async def test_transform_applies_to_listed_and_watched_objects_not_bookmarks() -> None:
    seen: list[str] = []

    def tag(obj: ConfigMap) -> ConfigMap:
        seen.append(obj.metadata.name or "")
        return msgspec.structs.replace(obj, data={"transformed": "yes"})

    stored: list[ConfigMap] = []
    h = Harness(
        ListStep([cm("a", 5), cm("b", 7)], rv="10"),
        WatchStep(
            [
                ev("ADDED", cm("c", 11)),
                ev("MODIFIED", cm("a", 12)),
                ev("DELETED", cm("c", 13)),
                bookmark(15),
            ],
            hold=True,
        ),
        transform=tag,
        resync_period=10,
    )
    record_replace = h.store.replace

    def replace(objects: Iterable[ConfigMap], /) -> None:
        stored.extend(objects)
        record_replace(objects)

    h.store.replace = replace  # type: ignore[method-assign]
    for op in ("add", "update", "delete"):
        setattr(h.store, op, stored.append)

    await h.play(then=lambda: h.clock.advance(10))
    assert seen == ["a", "b", "c", "a", "c"]  # the bookmark is not transformed
    assert [o.data for o in stored] == [{"transformed": "yes"}] * 5  # all the store got
    assert h.store.ops == [("replace", ["a", "b"]), ("resync",)]  # resync: the store's own


# -- watch-list (sendInitialEvents) ---------------------------------------------------------


async def test_watch_list_streams_the_initial_state_then_keeps_the_stream() -> None:
    h = Harness(
        WatchStep(
            [
                ev("ADDED", cm("a", 3)),
                ev("ADDED", cm("b", 4)),
                bookmark(5),  # not the end one: ignored
                bookmark(9, end=True),
                ev("MODIFIED", cm("a", 10)),
            ],
            hold=True,
            expect={
                "send_initial_events": True,
                "resource_version_match": "NotOlderThan",
                "resource_version": None,
                "allow_watch_bookmarks": True,
            },
        ),
        watch_list=True,
    )
    await h.play()
    assert h.store.ops == [("replace", ["a", "b"]), ("update", "a", "10")]
    assert h.reflector.last_sync_resource_version == "10"
    assert h.reflector.watch_list_enabled


async def test_watch_list_sync_point_is_the_end_bookmark_rv() -> None:
    h = Harness(
        WatchStep(
            [ev("ADDED", cm("a", 3)), bookmark(9, end=True)],
            duration=300,
            expect={"send_initial_events": True},
        ),
        WatchStep(hold=True, expect={"resource_version": "9", "send_initial_events": None}),
        watch_list=True,
    )
    await h.play()
    assert h.store.ops == [("replace", ["a"])]
    assert [k for k, _ in h.calls()] == ["watch", "watch"]  # re-watched, no relist


async def test_watch_list_without_end_bookmark_times_out_and_falls_back_to_list() -> None:
    h = Harness(
        WatchStep([ev("ADDED", cm("a", 3))], hold=True, expect={"send_initial_events": True}),
        ListStep([cm("a")], rv="7", expect={"resource_version": "0"}),
        WatchStep(hold=True, expect={"resource_version": "7", "send_initial_events": None}),
        watch_list=True,
        watch_list_timeout=30,
    )
    await h.play()
    assert [type(e) for e in h.errors] == [WatchListTimeoutError]
    assert h.clock.monotonic() - 1000 == pytest.approx(30)
    assert h.store.ops == [("replace", ["a"])]
    assert h.reflector.last_sync_resource_version == "7"
    assert not h.reflector.watch_list_enabled  # remembered (D9)


async def test_watch_list_rejected_by_server_falls_back_and_remembers() -> None:
    h = Harness(
        WatchStep(open_error=BadRequest("sendInitialEvents is forbidden")),
        ListStep([cm("a")], rv="7"),
        WatchStep(hold=True),
        watch_list=True,
    )
    await h.play()
    assert [type(e) for e in h.errors] == [BadRequest]
    assert not h.reflector.watch_list_enabled
