"""Pure helpers of the Job controller: index notation, pod predicates, failure policy."""

from __future__ import annotations

import pytest

from kcm.controllers.job import COMPLETION_INDEX_KEY, format_indexes, parse_indexes
from kcm.controllers.job._pods import completion_index, match_pod_failure_policy
from kcm.models import from_dict
from kcm.models.batch_v1 import PodFailurePolicy
from kcm.models.core_v1 import Pod


@pytest.mark.parametrize(
    ("indexes", "text"),
    [(set(), ""), ({1}, "1"), ({1, 3, 4, 5}, "1,3-5"), ({0, 1, 2, 7, 9, 10}, "0-2,7,9-10")],
)
def test_indexes_round_trip(indexes: set[int], text: str) -> None:
    assert format_indexes(indexes) == text
    assert parse_indexes(text, 100) == indexes


def test_parse_indexes_clips_to_completions_and_skips_garbage() -> None:
    assert parse_indexes("0-3,x,5,8-12", 10) == {0, 1, 2, 3, 5, 8, 9}


def _pod(annotations: dict[str, str] | None = None, **status: object) -> Pod:
    return from_dict(
        Pod,
        {
            "metadata": {"name": "p", "namespace": "ns", "annotations": annotations or {}},
            "status": status,
        },
    )


def test_completion_index_from_annotation() -> None:
    assert completion_index(_pod({COMPLETION_INDEX_KEY: "4"})) == 4
    assert completion_index(_pod({COMPLETION_INDEX_KEY: "-1"})) is None
    assert completion_index(_pod({COMPLETION_INDEX_KEY: "x"})) is None
    assert completion_index(_pod()) is None


def _terminated(code: int, name: str = "main") -> dict[str, object]:
    return {"name": name, "state": {"terminated": {"exitCode": code}}}


POLICY = from_dict(
    PodFailurePolicy,
    {
        "rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}},
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [3, 4]}},
        ]
    },
)


def test_failure_policy_rules_apply_in_order() -> None:
    disrupted = _pod(
        conditions=[{"type": "DisruptionTarget", "status": "True"}],
        containerStatuses=[_terminated(3)],
    )
    assert match_pod_failure_policy(POLICY, disrupted).action == "Ignore"
    assert not match_pod_failure_policy(POLICY, disrupted).counts
    verdict = match_pod_failure_policy(POLICY, _pod(containerStatuses=[_terminated(3)]))
    assert verdict.action == "FailJob"
    assert verdict.message == (
        "Container main for pod ns/p failed with exit code 3 matching FailJob rule at index 1"
    )
    assert match_pod_failure_policy(POLICY, _pod(containerStatuses=[_terminated(7)])).action == (
        "Count"
    )
    # Exit code 4 matches nothing: default handling (counted).
    none = match_pod_failure_policy(POLICY, _pod(containerStatuses=[_terminated(4)]))
    assert none.action is None
    assert none.counts
    # Exit code 0 never matches an exit-code rule.
    assert match_pod_failure_policy(POLICY, _pod(containerStatuses=[_terminated(0)])).action is None
    assert match_pod_failure_policy(None, _pod()).counts


@pytest.mark.parametrize(
    ("failures", "delay"),
    [(0, 0.0), (1, 10.0), (2, 20.0), (3, 40.0), (6, 320.0), (7, 360.0), (50, 360.0)],
)
def test_pod_recreate_backoff_doubles_to_six_minutes(failures: int, delay: float) -> None:
    from kcm.controllers.job._controller import _Backoff

    record = _Backoff(failures, last_failure=100.0)
    assert record.remaining(100.0) == delay
    assert record.remaining(100.0 + delay) == 0.0
    if delay:
        assert record.remaining(100.0 + delay / 2) == delay / 2
