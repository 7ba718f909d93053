"""The disruption controller's arithmetic (pure: no server, times given)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kcm.controllers.disruption._budget import (
    count_healthy_pods,
    desired_healthy,
    disrupted_pods,
    fail_safe_status,
    needs_expected_scale,
    new_status,
    status_is_current,
    status_of,
)
from kcm.models.core_v1 import Pod, PodCondition, PodStatus
from kcm.models.meta_v1 import Condition, ObjectMeta
from kcm.models.policy_v1 import (
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _pdb(
    *,
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    status: PodDisruptionBudgetStatus | None = None,
    generation: int = 1,
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name="pdb", namespace="ns", generation=generation),
        spec=PodDisruptionBudgetSpec(min_available=min_available, max_unavailable=max_unavailable),
        status=status,
    )


def _pod(name: str, *, ready: bool = True, deleting: bool = False) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, deletion_timestamp=NOW if deleting else None),
        status=PodStatus(
            phase="Running",
            conditions=[PodCondition(type="Ready", status="True" if ready else "False")],
        ),
    )


@pytest.mark.parametrize(
    ("min_available", "max_unavailable", "pods", "expected", "result"),
    [
        (2, None, 3, 10, (3, 2)),  # an integer minAvailable counts the pods
        ("50%", None, 3, 5, (5, 3)),  # 2.5 rounds up
        ("1%", None, 3, 5, (5, 1)),
        ("0%", None, 3, 5, (5, 0)),
        (None, 1, 3, 5, (5, 4)),
        (None, "25%", 3, 5, (5, 3)),  # 1.25 unavailable rounds up to 2
        (None, 7, 3, 5, (5, 0)),  # never below zero
        (None, "100%", 3, 0, (0, 0)),
        (None, None, 3, 5, (0, 0)),
    ],
)
def test_pdb_desired_healthy_rounds_like_go(
    min_available: int | str | None,
    max_unavailable: int | str | None,
    pods: int,
    expected: int,
    result: tuple[int, int],
) -> None:
    pdb = _pdb(min_available=min_available, max_unavailable=max_unavailable)
    assert desired_healthy(pdb, pods, expected) == result


def test_pdb_needs_expected_scale_only_for_percentages_and_max_unavailable() -> None:
    assert not needs_expected_scale(_pdb(min_available=2))
    assert needs_expected_scale(_pdb(min_available="20%"))
    assert needs_expected_scale(_pdb(max_unavailable=1))


def test_pdb_bad_percentage_has_go_message() -> None:
    with pytest.raises(ValueError, match=r'invalid value "x%": strconv\.Atoi: parsing "x"'):
        desired_healthy(_pdb(max_unavailable="x%"), 1, 1)
    with pytest.raises(ValueError, match="string is not a percentage"):
        desired_healthy(_pdb(min_available="5"), 1, 1)


def test_pdb_disrupted_pods_kept_until_two_minutes_then_expired() -> None:
    at = NOW - timedelta(seconds=60)
    old = NOW - timedelta(seconds=121)
    pdb = _pdb(
        status=PodDisruptionBudgetStatus(
            disrupted_pods={"a": at, "b": old, "gone": at, "deleting": at}
        )
    )
    pods = [_pod("a"), _pod("b"), _pod("deleting", deleting=True)]
    result = disrupted_pods(pdb, pods, NOW)
    assert dict(result.pods) == {"a": at}
    assert result.recheck_at == at + timedelta(minutes=2)
    assert result.expired == ("b",)


def test_pdb_healthy_count_leaves_out_unready_deleting_and_disrupted() -> None:
    pods = [_pod("a"), _pod("b", ready=False), _pod("c", deleting=True), _pod("d")]
    assert count_healthy_pods(pods, {}, NOW) == 2
    assert count_healthy_pods(pods, {"d": NOW - timedelta(seconds=10)}, NOW) == 1
    assert count_healthy_pods(pods, {"d": NOW - timedelta(seconds=130)}, NOW) == 2


def test_pdb_no_disruption_while_no_pods_are_expected() -> None:
    pdb = _pdb(max_unavailable=1)
    status, _ = status_of(pdb, [_pod("a")], 0, 0, NOW)
    assert (status.current_healthy, status.disruptions_allowed) == (1, 0)


def test_pdb_status_written_fresh_with_condition_of_this_write() -> None:
    earlier = NOW - timedelta(hours=1)
    pdb = _pdb(
        min_available=1,
        status=PodDisruptionBudgetStatus(
            conditions=[
                Condition(type="DisruptionAllowed", status="True", last_transition_time=earlier),
                Condition(type="Other", status="True"),
            ]
        ),
    )
    status, _ = status_of(pdb, [_pod("a"), _pod("b")], 2, 1, NOW)
    written = new_status(pdb, status, NOW).status
    assert written is not None
    # 1.24 rebuilds the status: only DisruptionAllowed, its time the write's.
    assert [(c.type, c.reason, c.last_transition_time) for c in written.conditions or ()] == [
        ("DisruptionAllowed", "SufficientPods", NOW)
    ]
    assert written.disrupted_pods is None
    assert status_is_current(new_status(pdb, status, NOW), status)
    assert not status_is_current(pdb, status)


def test_pdb_status_not_current_when_generation_moved() -> None:
    pdb = _pdb(min_available=1)
    status, _ = status_of(pdb, [_pod("a"), _pod("b")], 2, 1, NOW)
    written = new_status(pdb, status, NOW)
    moved = PodDisruptionBudget(
        metadata=ObjectMeta(name="pdb", generation=2), spec=written.spec, status=written.status
    )
    assert not status_is_current(moved, status)


def test_pdb_fail_safe_keeps_numbers_and_sets_sync_failed() -> None:
    pdb = _pdb(
        min_available="50%",
        status=PodDisruptionBudgetStatus(
            current_healthy=3,
            desired_healthy=2,
            expected_pods=4,
            disruptions_allowed=1,
            observed_generation=1,
            conditions=[
                Condition(
                    type="DisruptionAllowed",
                    status="True",
                    reason="SufficientPods",
                    last_transition_time=NOW - timedelta(hours=1),
                )
            ],
        ),
        generation=2,
    )
    status = fail_safe_status(pdb, "boom", NOW).status
    assert status is not None
    assert (status.current_healthy, status.expected_pods, status.disruptions_allowed) == (3, 4, 0)
    (condition,) = status.conditions or ()
    assert (condition.status, condition.reason, condition.message) == (
        "False",
        "SyncFailed",
        "boom",
    )
    assert condition.observed_generation == 1  # the status's, not the object's
    assert condition.last_transition_time == NOW
