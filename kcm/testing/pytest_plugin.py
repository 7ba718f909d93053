"""pytest plugin registered through the ``pytest11`` entry point: kcm's fixtures.

Fixtures are lazy: nothing starts unless a test asks for it.

* ``fake_clock``: a :class:`kcm.testing.FakeClock`.
* ``api_server``: a fresh in-memory :class:`kcm.apiserver.ApiServer` per test, on the test's
  anyio backend (mark the test ``@pytest.mark.anyio``).
"""

from __future__ import annotations

import pytest

from kcm.apiserver._pytest import api_server as api_server

from ._clock import FakeClock

__all__ = ["api_server", "fake_clock"]


@pytest.fixture
def fake_clock() -> FakeClock:
    """A :class:`kcm.testing.FakeClock` at virtual time 1000 s."""
    return FakeClock()
