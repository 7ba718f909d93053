"""Pure helpers of the Job controller: index notation, pod predicates, failure policy, the
pod-recreate backoff and the OnFailure restart limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kcm.controllers.job import COMPLETION_INDEX_KEY, format_indexes, parse_indexes
from kcm.controllers.job._backoff import BackoffRecord, finish_time, next_record
from kcm.controllers.job._pods import (
    completion_index,
    match_pod_failure_policy,
    past_backoff_limit_on_failure,
)
from kcm.models import format_time, from_dict
from kcm.models.batch_v1 import Job, PodFailurePolicy
from kcm.models.core_v1 import Pod


@pytest.mark.parametrize(
    ("indexes", "text"),
    [
        (set(), ""),
        ({1}, "1"),
        ({1, 3, 4, 5}, "1,3-5"),
        ({0, 1, 2, 7, 9, 10}, "0-2,7,9,10"),  # two in a row: listed, as Go writes them
        ({0, 1}, "0,1"),
    ],
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
    record = BackoffRecord(failures, last_failure=T0)
    assert record.delay() == delay
    assert record.remaining(T0) == delay
    assert record.remaining(T0 + timedelta(seconds=delay)) == 0.0
    if delay:
        assert record.remaining(T0 + timedelta(seconds=delay / 2)) == delay / 2
        assert record.remaining(T0 + timedelta(seconds=delay + 1)) == 0.0


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _at(seconds: float) -> str:
    return format_time(T0 + timedelta(seconds=seconds))


def _finished_pod(
    *,
    ready_false_at: float | None = None,
    containers: list[float | None] | None = None,
    deleted_at: float | None = None,
    grace: int | None = None,
    phase: str = "Failed",
) -> Pod:
    status: dict[str, object] = {"phase": phase}
    if ready_false_at is not None:
        status["conditions"] = [
            {"type": "Ready", "status": "False", "lastTransitionTime": _at(ready_false_at)}
        ]
    if containers is not None:
        status["containerStatuses"] = [
            {
                "name": f"c{i}",
                "state": (
                    {"terminated": {"exitCode": 1, "finishedAt": _at(t)}}
                    if t is not None
                    else {"running": {}}
                ),
            }
            for i, t in enumerate(containers)
        ]
    meta: dict[str, object] = {"name": "p", "namespace": "ns"}
    if deleted_at is not None:
        meta["deletionTimestamp"] = _at(deleted_at)
        meta["deletionGracePeriodSeconds"] = grace
    return from_dict(Pod, {"metadata": meta, "status": status})


def test_finish_time_prefers_ready_false_then_containers_then_deletion_then_now() -> None:
    now = T0 + timedelta(seconds=1000)
    # the Ready condition turning False wins over everything else
    both = _finished_pod(ready_false_at=5, containers=[7], deleted_at=9)
    assert finish_time(both, now) == T0 + timedelta(seconds=5)
    # the latest container finish, but only if every container has finished
    assert finish_time(_finished_pod(containers=[3, 8, 6]), now) == T0 + timedelta(seconds=8)
    assert finish_time(_finished_pod(containers=[3, None], deleted_at=40, grace=30), now) == (
        T0 + timedelta(seconds=10)
    )  # a running container: the deletion time less the grace period
    assert finish_time(_finished_pod(deleted_at=40), now) == T0 + timedelta(seconds=40)
    assert finish_time(_finished_pod(), now) == now
    ready_true = from_dict(
        Pod,
        {
            "metadata": {"name": "p"},
            "status": {
                "phase": "Failed",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": _at(1)}],
            },
        },
    )
    assert finish_time(ready_true, now) == now


def test_backoff_record_follows_finish_times_not_the_time_of_counting() -> None:
    now = T0 + timedelta(seconds=100)
    record = next_record(BackoffRecord(), [], [_finished_pod(containers=[90])], now)
    assert record == BackoffRecord(1, T0 + timedelta(seconds=90))
    assert record.remaining(now) == 0.0  # 10 s after a failure at 90 s
    assert record.remaining(T0 + timedelta(seconds=95)) == 5.0
    # more failures add up; the last one to finish is the reference
    record = next_record(
        record, [], [_finished_pod(containers=[120]), _finished_pod(containers=[110])], now
    )
    assert record == BackoffRecord(3, T0 + timedelta(seconds=120))
    assert record.remaining(T0 + timedelta(seconds=130)) == 30.0  # 40 s after 120 s
    # nothing new: unchanged
    assert next_record(record, [], [], now) is record


def test_a_success_resets_the_backoff_to_the_failures_after_it() -> None:
    now = T0 + timedelta(seconds=500)
    old = BackoffRecord(4, T0)
    success = _finished_pod(containers=[200], phase="Succeeded")
    assert next_record(old, [success], [], now) == BackoffRecord()
    before = _finished_pod(containers=[150])
    after1, after2 = _finished_pod(containers=[210]), _finished_pod(containers=[230])
    assert next_record(old, [success], [before], now) == BackoffRecord()
    assert next_record(old, [success], [after2, before, after1], now) == BackoffRecord(
        2, T0 + timedelta(seconds=230)
    )


def _on_failure_job(backoff_limit: int | None, restart_policy: str = "OnFailure") -> Job:
    return from_dict(
        Job,
        {
            "metadata": {"name": "j", "namespace": "ns"},
            "spec": {
                "backoffLimit": backoff_limit,
                "template": {
                    "spec": {"restartPolicy": restart_policy, "containers": [{"name": "c"}]}
                },
            },
        },
    )


def _restarting_pod(phase: str, *restarts: int, init: int = 0) -> Pod:
    status: dict[str, object] = {
        "phase": phase,
        "containerStatuses": [{"name": f"c{i}", "restartCount": n} for i, n in enumerate(restarts)],
    }
    if init:
        status["initContainerStatuses"] = [{"name": "init", "restartCount": init}]
    return from_dict(Pod, {"metadata": {"name": "p"}, "status": status})


def test_past_backoff_limit_on_failure_sums_restarts_of_pending_and_running_pods() -> None:
    job = _on_failure_job(3)
    assert not past_backoff_limit_on_failure(job, [_restarting_pod("Running", 1, 1)])
    assert past_backoff_limit_on_failure(job, [_restarting_pod("Running", 1, 1, init=1)])
    assert past_backoff_limit_on_failure(
        job, [_restarting_pod("Running", 2), _restarting_pod("Pending", 1)]
    )
    # finished pods' restarts do not count
    assert not past_backoff_limit_on_failure(
        job, [_restarting_pod("Failed", 5), _restarting_pod("Succeeded", 5)]
    )
    # backoffLimit 0: any restart; unset: the default 6
    assert past_backoff_limit_on_failure(_on_failure_job(0), [_restarting_pod("Running", 1)])
    assert not past_backoff_limit_on_failure(_on_failure_job(0), [_restarting_pod("Running", 0)])
    assert not past_backoff_limit_on_failure(_on_failure_job(None), [_restarting_pod("Running", 5)])
    assert past_backoff_limit_on_failure(_on_failure_job(None), [_restarting_pod("Running", 6)])
    # only restartPolicy OnFailure restarts containers in place
    never = _on_failure_job(1, restart_policy="Never")
    assert not past_backoff_limit_on_failure(never, [_restarting_pod("Running", 9)])
