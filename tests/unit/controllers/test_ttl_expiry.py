"""TTL-after-finished: which Jobs need cleanup and when they expire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kcm.controllers.ttlafterfinished import expire_at, needs_cleanup
from kcm.models import from_dict
from kcm.models.batch_v1 import Job
from kcm.runtime import TerminalError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _job(ttl: int | None, cond: str | None, *, when: str | None = "2026-01-01T00:00:00Z") -> Job:
    conditions = []
    if cond is not None:
        conditions.append({"type": cond, "status": "True", "lastTransitionTime": when})
    spec = {} if ttl is None else {"ttlSecondsAfterFinished": ttl}
    return from_dict(
        Job, {"metadata": {"name": "j"}, "spec": spec, "status": {"conditions": conditions}}
    )


def test_needs_cleanup() -> None:
    assert needs_cleanup(_job(10, "Complete"))
    assert needs_cleanup(_job(0, "Failed"))
    assert not needs_cleanup(_job(None, "Complete"))
    assert not needs_cleanup(_job(10, None))
    assert not needs_cleanup(_job(10, "Suspended"))


def test_expire_at_is_transition_plus_ttl() -> None:
    assert expire_at(_job(30, "Complete")) == T0 + timedelta(seconds=30)


def test_missing_transition_time_is_terminal() -> None:
    with pytest.raises(TerminalError):
        expire_at(_job(30, "Complete", when=None))
