"""Backoff: the exact client-go sequence (R2), jitter bounds, cap and the quiet-period reset."""

from __future__ import annotations

import random

import pytest

from kcm.informers import Backoff
from kcm.testing import FakeClock


def test_exact_sequence_without_jitter() -> None:
    b = Backoff(jitter=0, clock=FakeClock())
    assert [b.next_delay() for _ in range(9)] == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30]


def test_jitter_matches_seeded_uniform_in_d_to_2d() -> None:
    b = Backoff(clock=FakeClock(), rng=random.Random(7))
    ref = random.Random(7)
    bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    got = [b.next_delay() for _ in bases]
    assert got == [d + ref.random() * d for d in bases]
    for d, g in zip(bases, got, strict=True):
        assert d <= g < 2 * d


@pytest.mark.anyio
async def test_resets_only_after_a_quiet_period() -> None:
    clock = FakeClock()
    b = Backoff(jitter=0, clock=clock)
    assert [b.next_delay() for _ in range(3)] == [0.8, 1.6, 3.2]
    await clock.advance(120)  # exactly the reset interval: not quiet enough
    assert b.next_delay() == 6.4
    await clock.advance(120.5)
    assert b.next_delay() == 0.8
    b.reset()
    assert b.next_delay() == 0.8


def test_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="backoff needs"):
        Backoff(initial=5, cap=1)
