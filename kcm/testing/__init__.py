"""kcm's shipped test kit: a fake clock, CRD manifests, and (through the pytest plugin) the
embedded API server (``api_server`` and ``fake_clock`` fixtures)."""

from ._clock import FakeClock as FakeClock
from ._crd import crd_manifest as crd_manifest

__all__ = ["FakeClock", "crd_manifest"]
