"""The failed-daemon-pod backoff (client-go's ``flowcontrol.Backoff``, 1 s doubling to 15 min).

A kubelet that rejects a daemon pod (a port in use, a missing volume) makes it Failed at
once; deleting and re-creating it at full speed would fight the kubelet. So each (DaemonSet,
generation, node) gets a delay: the first failed pod is deleted at once and starts it at 1 s,
every further deletion doubles it up to 15 minutes, and a key left alone for twice the cap
starts over. Timed on the controller's clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from kcm.clock import SYSTEM_CLOCK, Clock

__all__ = ["FAILED_POD_BACKOFF_INITIAL", "FAILED_POD_BACKOFF_MAX", "FailedPodBackoff"]

FAILED_POD_BACKOFF_INITIAL = 1.0
"""Seconds before the second failed pod of a node may be deleted."""
FAILED_POD_BACKOFF_MAX = 15 * 60.0
"""The backoff's cap (15 minutes)."""


@dataclass(slots=True)
class _Entry:
    backoff: float
    last_update: float


@final
class FailedPodBackoff:
    """Per-key exponential backoff on a clock's monotonic time.

    Args:
        clock: the clock (``monotonic()`` is used).
        initial: the first delay, in seconds.
        maximum: the cap; a key not renewed for twice this long is forgotten.
    """

    def __init__(
        self,
        *,
        clock: Clock = SYSTEM_CLOCK,
        initial: float = FAILED_POD_BACKOFF_INITIAL,
        maximum: float = FAILED_POD_BACKOFF_MAX,
    ) -> None:
        self._clock = clock
        self._initial = initial
        self._max = maximum
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def _expired(self, entry: _Entry, now: float) -> bool:
        return now - entry.last_update > 2 * self._max

    def get(self, key: str) -> float:
        """The key's current delay (0 if unknown)."""
        entry = self._entries.get(key)
        return entry.backoff if entry is not None else 0.0

    def in_backoff(self, key: str) -> bool:
        """Whether less than the key's delay has passed since it was last renewed
        (``IsInBackOffSinceUpdate`` at now)."""
        entry = self._entries.get(key)
        now = self._clock.monotonic()
        if entry is None or self._expired(entry, now):
            return False
        return now - entry.last_update < entry.backoff

    def next(self, key: str) -> None:
        """Renew the key: start it at the initial delay (new or expired), else double it (up to
        the cap)."""
        now = self._clock.monotonic()
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, now):
            self._entries[key] = _Entry(self._initial, now)
            return
        entry.backoff = min(entry.backoff * 2, self._max)
        entry.last_update = now

    def gc(self) -> None:
        """Forget keys not renewed for twice the cap (Go runs this every minute)."""
        now = self._clock.monotonic()
        for key in [k for k, e in self._entries.items() if self._expired(e, now)]:
            del self._entries[key]
