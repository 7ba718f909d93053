"""kcm's shipped test kit: a fake clock, a fake event recorder, CRD manifests, ``eventually``
for state behind real I/O, ``client_config_for(server)`` to connect the client to the embedded
API server, and (through the pytest plugin) the embedded API server
(``api_server`` and ``fake_clock`` fixtures)."""

from ._apiserver import client_config_for as client_config_for
from ._clock import FakeClock as FakeClock
from ._crd import crd_manifest as crd_manifest
from ._eventually import eventually as eventually
from ._recorder import FakeRecorder as FakeRecorder

__all__ = ["FakeClock", "FakeRecorder", "client_config_for", "crd_manifest", "eventually"]
