"""kcm's shipped test kit: a fake clock now; the embedded API server fixture joins it."""

from ._clock import FakeClock as FakeClock

__all__ = ["FakeClock"]
