"""The reflector's retry delay: exponential, jittered, capped, reset after a quiet period."""

from __future__ import annotations

import random
from typing import final

from kcm.clock import SYSTEM_CLOCK, Clock

__all__ = ["Backoff"]


@final
class Backoff:
    """Exponential backoff with jitter and a cap (R2; the classic reset rule).

    The n-th delay (from 0) is ``d * (1 + jitter * u)`` with ``d = min(initial * factor**n,
    cap)`` and ``u`` uniform in [0, 1): with the defaults [0.8, 1.6), [1.6, 3.2), ...,
    [25.6, 51.2), then [30, 60) for ever. The sequence starts again from ``initial`` when no
    delay was asked for during more than ``reset_after`` seconds (a quiet period), so a
    continuously failing informer stays at the cap instead of periodically hammering the
    server again (the newer client-go rule, which resets every 2 minutes, does not).

    Args:
        initial, cap, factor, jitter, reset_after: see above (seconds).
        clock: measures the quiet period.
        rng: the random source for jitter (inject a seeded one in tests).
    """

    def __init__(
        self,
        *,
        initial: float = 0.8,
        cap: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        clock: Clock = SYSTEM_CLOCK,
        rng: random.Random | None = None,
    ) -> None:
        if initial <= 0 or cap < initial or factor < 1 or jitter < 0:
            raise ValueError(
                "backoff needs 0 < initial <= cap, factor >= 1 and jitter >= 0, got "
                f"initial={initial}, cap={cap}, factor={factor}, jitter={jitter}"
            )
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        self.reset_after = reset_after
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()
        self._duration = initial
        self._last: float | None = None

    def reset(self) -> None:
        """Start again from ``initial``."""
        self._duration = self.initial
        self._last = None

    def next_delay(self) -> float:
        """The next delay in seconds (and advance the sequence)."""
        now = self._clock.monotonic()
        if self._last is not None and now - self._last > self.reset_after:
            self._duration = self.initial
        self._last = now
        base = self._duration
        self._duration = min(base * self.factor, self.cap)
        if self.jitter > 0:
            return base + self._rng.random() * self.jitter * base
        return base
