"""Every rate limiter against client-go's numbers, on a fake clock."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from kcm.testing import FakeClock
from kcm.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)

pytestmark = pytest.mark.anyio


def test_exponential_sequence_and_cap_on_the_19th_failure() -> None:
    limiter = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:4] == pytest.approx([0.005, 0.010, 0.020, 0.040])
    assert delays[17] == pytest.approx(0.005 * 2**17)  # 655.36 s, still under the cap
    assert delays[18] == 1000.0  # 19th failure: 5 ms * 2**18 > 1000 s
    assert delays[19] == 1000.0
    assert limiter.num_requeues("a") == 20
    assert limiter.num_requeues("b") == 0
    assert limiter.when("b") == pytest.approx(0.005)  # per item


def test_exponential_forget_resets_and_huge_counts_do_not_overflow() -> None:
    limiter = ItemExponentialFailureRateLimiter(1.0, 60.0)
    for _ in range(5000):
        limiter.when("a")
    assert limiter.when("a") == 60.0
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 1.0
    limiter.forget("never-seen")  # harmless


async def test_exponential_failure_counts_expire_without_forget() -> None:
    clock = FakeClock()
    limiter = ItemExponentialFailureRateLimiter(0.005, 10.0, clock=clock)  # ttl = 20 s
    limiter.when("leaked")
    limiter.when("busy")
    for _ in range(4):
        await clock.advance(10)
        limiter.when("busy")  # keeps failing: its entry is refreshed
    assert limiter.num_requeues("leaked") == 0  # expired after 20 s with no failure
    assert limiter.num_requeues("busy") == 5
    assert len(limiter._failures) == 1


def test_exponential_failure_map_is_bounded() -> None:
    limiter = ItemExponentialFailureRateLimiter(max_tracked=2)
    for key in ["a", "b", "c"]:
        limiter.when(key)
    assert len(limiter._failures) == 2
    assert limiter.num_requeues("c") == 1


def test_invalid_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="delays"):
        ItemExponentialFailureRateLimiter(-1)
    with pytest.raises(ValueError, match="qps"):
        BucketRateLimiter(0)
    with pytest.raises(ValueError, match="burst"):
        BucketRateLimiter(1, 0)
    with pytest.raises(ValueError, match="at least one"):
        MaxOfRateLimiter()


async def test_bucket_burst_then_reserved_delays_then_refill() -> None:
    clock = FakeClock()
    bucket = BucketRateLimiter(10, 100, clock=clock)
    assert all(bucket.when(i) == 0.0 for i in range(100))
    assert bucket.when("x") == pytest.approx(0.1)
    assert bucket.when("x") == pytest.approx(0.2)  # reservations stack up
    await clock.advance(1.0)  # +10 tokens: -2 + 10 = 8 left
    assert [bucket.when("y") for _ in range(8)] == [0.0] * 8
    assert bucket.when("y") == pytest.approx(0.1)
    assert bucket.num_requeues("y") == 0
    bucket.forget("y")  # no per-item state
    await clock.advance(1000)
    assert [bucket.when("z") for _ in range(100)] == [0.0] * 100
    assert bucket.when("z") == pytest.approx(0.1)  # refill is capped at burst


def test_bucket_mass_failure_builds_a_global_delay_unless_capped() -> None:
    clock = FakeClock()
    bucket = BucketRateLimiter(clock=clock)
    delays = [bucket.when(i) for i in range(10_000)]
    assert delays[-1] == pytest.approx(990.0)  # (10000 - 100) / 10 qps (B15)
    capped = WithMaxWaitRateLimiter(BucketRateLimiter(clock=clock), 60.0)
    assert max(capped.when(i) for i in range(10_000)) == 60.0


def test_unlimited_bucket() -> None:
    bucket = BucketRateLimiter(float("inf"), 0)
    assert bucket.when("a") == 0.0


def test_max_of_consults_every_limiter() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock=clock)
    # The bucket's burst is spent by 100 failures of *different* items...
    assert [limiter.when(i) for i in range(100)] == [pytest.approx(0.005)] * 100
    # ... so the next failure of a fresh item waits for the bucket, not its own 5 ms.
    assert limiter.when("fresh") == pytest.approx(0.1)
    limiter.when("fresh")
    assert limiter.num_requeues("fresh") == 2
    limiter.forget("fresh")
    assert limiter.num_requeues("fresh") == 0


def test_fast_slow() -> None:
    limiter = ItemFastSlowRateLimiter(0.001, 10.0, 3)
    assert [limiter.when("a") for _ in range(5)] == [0.001, 0.001, 0.001, 10.0, 10.0]
    assert limiter.num_requeues("a") == 5
    limiter.forget("a")
    assert limiter.when("a") == 0.001


def test_with_max_wait_delegates() -> None:
    inner = ItemExponentialFailureRateLimiter(1.0, 1000.0)
    limiter = WithMaxWaitRateLimiter(inner, 3.0)
    assert [limiter.when("a") for _ in range(4)] == [1.0, 2.0, 3.0, 3.0]
    assert limiter.num_requeues("a") == 4
    limiter.forget("a")
    assert inner.num_requeues("a") == 0


class ConstantLimiter:
    """A user-written limiter: conforming to the protocol is all it takes."""

    def __init__(self) -> None:
        self.failures: dict[Hashable, int] = {}

    def when(self, item: str) -> float:
        self.failures[item] = self.failures.get(item, 0) + 1
        return 7.0

    def forget(self, item: str) -> None:
        self.failures.pop(item, None)

    def num_requeues(self, item: str) -> int:
        return self.failures.get(item, 0)


def test_user_limiter_satisfies_the_protocol() -> None:
    limiter: RateLimiter[str] = ConstantLimiter()
    combined = MaxOfRateLimiter(ItemExponentialFailureRateLimiter(), WithMaxWaitRateLimiter(
        ItemExponentialFailureRateLimiter(100.0), 50.0))  # fmt: skip
    assert limiter.when("a") == 7.0
    assert combined.when("a") == 50.0
