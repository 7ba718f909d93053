"""pytest plugin registered through the ``pytest11`` entry point: kcm's fixtures.

Fixtures are lazy: nothing starts unless a test asks for it.
"""

from __future__ import annotations

import pytest

from ._clock import FakeClock


@pytest.fixture
def fake_clock() -> FakeClock:
    """A :class:`kcm.testing.FakeClock` at virtual time 1000 s."""
    return FakeClock()
