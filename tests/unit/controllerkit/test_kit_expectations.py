"""Expectations: counts go down as events arrive; records expire after the TTL on the clock."""

from __future__ import annotations

import pytest

from kcm.controllerkit import (
    EXPECTATIONS_TIMEOUT,
    ControllerExpectations,
    UIDTrackingControllerExpectations,
)
from kcm.models import ObjectKey
from kcm.testing import FakeClock

KEY = ObjectKey("default", "web")


def test_no_record_is_satisfied() -> None:
    exp = ControllerExpectations(clock=FakeClock())
    assert exp.satisfied(KEY)
    assert exp.get(KEY) is None


def test_creations_are_satisfied_once_all_are_observed() -> None:
    exp = ControllerExpectations(clock=FakeClock())
    exp.expect_creations(KEY, 2)
    assert not exp.satisfied(KEY)
    exp.creation_observed(KEY)
    assert exp.get(KEY) == (1, 0)
    assert not exp.satisfied(KEY)
    exp.creation_observed(KEY)
    assert exp.satisfied(KEY)
    exp.creation_observed(KEY)  # an extra event (e.g. an adoption) goes below zero, still fine
    assert exp.satisfied(KEY)


def test_deletions_and_lowering() -> None:
    exp = ControllerExpectations(clock=FakeClock())
    exp.expect_deletions(KEY, 3)
    exp.deletion_observed(KEY)
    exp.lower_expectations(KEY, 0, 1)  # a failed delete
    assert exp.get(KEY) == (0, 1)
    assert not exp.satisfied(KEY)
    exp.deletion_observed(KEY)
    assert exp.satisfied(KEY)


def test_raise_needs_a_record_and_expect_replaces_it() -> None:
    exp = ControllerExpectations(clock=FakeClock())
    exp.raise_expectations(KEY, 1, 1)
    assert exp.get(KEY) is None  # nothing to raise
    exp.expect_creations(KEY, 1)
    exp.raise_expectations(KEY, 2, 1)
    assert exp.get(KEY) == (3, 1)
    exp.expect_deletions(KEY, 1)
    assert exp.get(KEY) == (0, 1)


def test_delete_expectations_forgets_the_key() -> None:
    exp = ControllerExpectations(clock=FakeClock())
    exp.expect_creations(KEY, 5)
    exp.delete_expectations(KEY)
    assert exp.satisfied(KEY)
    assert exp.get(KEY) is None
    exp.delete_expectations(KEY)  # twice is fine


@pytest.mark.anyio
async def test_records_expire_after_five_minutes_on_the_injected_clock() -> None:
    clock = FakeClock()
    exp = ControllerExpectations(clock=clock)
    assert exp.ttl == EXPECTATIONS_TIMEOUT == 300.0
    exp.expect_creations(KEY, 1)
    await clock.advance(299.0)
    exp.raise_expectations(KEY, 1, 0)  # raising does not extend the TTL
    await clock.advance(0.999)
    assert not exp.satisfied(KEY)
    await clock.advance(0.002)
    assert exp.satisfied(KEY)
    assert exp.get(KEY) is None


@pytest.mark.anyio
async def test_expect_restarts_the_ttl() -> None:
    clock = FakeClock()
    exp = ControllerExpectations(clock=clock, ttl=10)
    exp.expect_creations(KEY, 1)
    await clock.advance(8)
    exp.expect_creations(KEY, 1)
    await clock.advance(8)
    assert not exp.satisfied(KEY)
    await clock.advance(3)
    assert exp.satisfied(KEY)


def test_ttl_must_be_positive() -> None:
    with pytest.raises(ValueError, match="ttl"):
        ControllerExpectations(ttl=0)


def test_uid_tracking_counts_each_expected_child_once() -> None:
    exp = UIDTrackingControllerExpectations(clock=FakeClock())
    a, b = ObjectKey("default", "a"), ObjectKey("default", "b")
    exp.expect_deletions(KEY, [a, b])
    assert exp.expected_deletions(KEY) == {a, b}
    assert exp.get(KEY) == (0, 2)
    exp.deletion_observed(KEY, a)
    exp.deletion_observed(KEY, a)  # graceful delete: update with deletionTimestamp, then delete
    exp.deletion_observed(KEY, ObjectKey("default", "stranger"))
    assert exp.get(KEY) == (0, 1)
    assert not exp.satisfied(KEY)
    exp.deletion_observed(KEY, b)
    assert exp.satisfied(KEY)
    assert exp.expected_deletions(KEY) == frozenset()


def test_uid_tracking_creations_and_delete() -> None:
    exp = UIDTrackingControllerExpectations(clock=FakeClock())
    exp.expect_creations(KEY, 1)
    exp.creation_observed(KEY)
    assert exp.satisfied(KEY)
    exp.expect_deletions(KEY, [ObjectKey("default", "a")])
    exp.delete_expectations(KEY)
    assert exp.satisfied(KEY)
    assert exp.expected_deletions(KEY) == frozenset()


@pytest.mark.anyio
async def test_uid_tracking_expires_too() -> None:
    clock = FakeClock()
    exp = UIDTrackingControllerExpectations(clock=clock, ttl=5)
    exp.expect_deletions(KEY, [ObjectKey("default", "a")])
    await clock.advance(5.5)
    assert exp.satisfied(KEY)
    assert exp.expected_deletions(KEY) == frozenset()
