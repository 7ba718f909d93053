"""kcm's shipped test kit: a fake clock, and (through the pytest plugin) the embedded API server."""

from ._clock import FakeClock as FakeClock

__all__ = ["FakeClock"]
