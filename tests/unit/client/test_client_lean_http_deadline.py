"""The lean pool's read timeouts: one lazily re-armed timer per connection serves every wait
(kcm.client._lean_http._Connection), driven here by a fake event loop's clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kcm.client._lean_http import _Connection


class _Timer:
    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self._when = when
        self.callback = callback
        self.cancelled = False

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self.cancelled = True


class _Loop:
    """time(), call_at() and a way to run what is due: all _Connection's deadline uses."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[_Timer] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(when, callback)
        self.timers.append(timer)
        return timer

    def advance(self, to: float) -> None:
        self.now = to
        for timer in sorted(self.timers, key=_Timer.when):
            if not timer.cancelled and timer.when() <= to and timer in self.timers:
                self.timers.remove(timer)
                timer.callback()

    def armed(self) -> list[float]:
        return [t.when() for t in self.timers if not t.cancelled]


class _Waiter:
    """A future's done/set_result/set_exception (a reader is woken with a result; the error
    is the connection's)."""

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.finished = False

    def done(self) -> bool:
        return self.finished or self.error is not None

    def set_result(self, value: Any) -> None:
        self.finished = True

    def set_exception(self, exc: BaseException) -> None:
        self.error = exc


class _Transport:
    closed = False

    def close(self) -> None:
        self.closed = True


def connection() -> tuple[_Connection, _Loop]:
    loop = _Loop()
    conn = _Connection(loop)
    conn.transport = _Transport()
    return conn, loop


def wait(conn: _Connection, loop: _Loop, timeout: float | None) -> _Waiter:
    """What read_piece does before it awaits: a reader, and its deadline."""
    conn._reader = waiter = _Waiter()
    conn._arm_deadline(timeout)
    return waiter


def test_waits_that_end_in_time_share_one_timer_and_none_times_out() -> None:
    conn, loop = connection()
    for start in range(0, 50, 3):  # a piece every 3 s, each read allowed 10 s
        loop.advance(start)
        waiter = wait(conn, loop, 10)
        loop.advance(start + 2.5)
        waiter.set_result(None)
        conn._reader = None
    assert conn._error is None
    assert not conn.closed
    assert len(loop.armed()) == 1  # one timer, re-armed when it fired, never one per read
    assert len(loop.timers) < 10


def test_a_wait_past_its_own_deadline_times_out_even_after_earlier_waits_reset_it() -> None:
    conn, loop = connection()
    first = wait(conn, loop, 10)  # timer at 10
    loop.advance(8)
    first.set_result(None)
    conn._reader = None
    second = wait(conn, loop, 10)  # deadline 18: the timer at 10 stays
    assert loop.armed() == [10]
    loop.advance(10)  # fires early for this wait: re-armed for its deadline
    assert not second.done()
    assert loop.armed() == [18]
    loop.advance(18)
    assert second.finished  # the reader wakes to the connection's error
    assert isinstance(conn._error, TimeoutError)
    assert conn.closed
    assert conn.transport.closed


def test_a_shorter_deadline_replaces_the_armed_timer() -> None:
    conn, loop = connection()
    wait(conn, loop, 60)
    waiter = wait(conn, loop, 5)
    assert loop.armed() == [5]
    loop.advance(5)
    assert waiter.finished
    assert isinstance(conn._error, TimeoutError)


def test_a_timer_that_fires_with_nobody_waiting_does_nothing() -> None:
    conn, loop = connection()
    waiter = wait(conn, loop, 10)
    waiter.set_result(None)
    conn._reader = None
    loop.advance(30)
    assert not conn.closed
    assert loop.armed() == []


def test_closing_the_connection_cancels_its_timer() -> None:
    conn, loop = connection()
    wait(conn, loop, 10)
    conn.close()
    assert loop.armed() == []


def test_a_wait_without_a_timeout_is_never_timed_out_by_an_earlier_waits_timer() -> None:
    conn, loop = connection()
    first = wait(conn, loop, 10)
    first.set_result(None)
    conn._reader = None
    second = wait(conn, loop, None)  # a watch without a read timeout
    loop.advance(1000)
    assert not second.done()
    assert conn._error is None
    assert loop.armed() == []
