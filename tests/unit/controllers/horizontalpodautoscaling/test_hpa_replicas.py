"""The replica calculation (kube's replica_calculator.go): tolerance, readiness, missing pods."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kcm.controllers.horizontalpodautoscaling import PodMetric, ReplicaCalculator, ReplicaError

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LONG_AGO = "2026-01-01T11:00:00Z"


def pod(
    name: str,
    *,
    cpu: str = "1",
    phase: str = "Running",
    ready: str = "True",
    started: str | None = LONG_AGO,
    transition: str = LONG_AGO,
    deleted: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if deleted:
        meta["deletionTimestamp"] = LONG_AGO
    status: dict[str, Any] = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": transition}],
    }
    if started:
        status["startTime"] = started
    container = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    return {"metadata": meta, "spec": {"containers": [container]}, "status": status}


def usage(**milli: int) -> dict[str, PodMetric]:
    return {name: PodMetric(v, NOW, timedelta(seconds=15)) for name, v in milli.items()}


CALC = ReplicaCalculator()


def test_utilization_above_target_scales_to_the_ratio_times_ready_pods() -> None:
    pods = [pod("a"), pod("b")]
    result = CALC.utilization_replicas(2, 50, "cpu", pods, usage(a=900, b=900), NOW)
    assert (result.replicas, result.utilization, result.raw_average) == (4, 90, 900)


def test_within_the_tolerance_the_count_stays() -> None:
    pods = [pod("a"), pod("b")]
    result = CALC.utilization_replicas(2, 50, "cpu", pods, usage(a=540, b=540), NOW)
    assert result.replicas == 2  # 54% of 50%: ratio 1.08
    loose = ReplicaCalculator(tolerance=0.0)
    assert loose.utilization_replicas(2, 50, "cpu", pods, usage(a=540, b=540), NOW).replicas == 3


def test_below_target_scales_down() -> None:
    pods = [pod(n) for n in "abcd"]
    result = CALC.utilization_replicas(4, 50, "cpu", pods, usage(a=100, b=100, c=100, d=100), NOW)
    assert result.replicas == 1


def test_missing_pods_count_as_full_on_a_scale_down_and_empty_on_a_scale_up() -> None:
    pods = [pod("a"), pod("b"), pod("c")]
    down = CALC.utilization_replicas(3, 50, "cpu", pods, usage(a=100, b=100), NOW)
    assert down.replicas == 3  # c at 100% of its request: (10+10+100)/3 = 40% -> ceil(0.8*3)
    up = CALC.utilization_replicas(3, 50, "cpu", pods, usage(a=1000, b=1000), NOW)
    assert up.replicas == 4  # c at 0: 66% -> ratio 1.33 * 3 pods


def test_unready_cpu_pods_count_as_zero_only_when_scaling_up() -> None:
    fresh = NOW.isoformat().replace("+00:00", "Z")
    pods = [pod("a"), pod("b", ready="False", started=fresh, transition=fresh)]
    up = CALC.utilization_replicas(2, 50, "cpu", pods, usage(a=1000, b=1000), NOW)
    assert up.replicas == 2  # (100% + 0) / 2 = 50%: at target
    down = CALC.utilization_replicas(2, 50, "cpu", pods, usage(a=100, b=1000), NOW)
    assert down.replicas == 1  # b ignored: only a's 10%


def test_pending_deleted_and_failed_pods_do_not_vote() -> None:
    pods = [pod("a"), pod("p", phase="Pending"), pod("f", phase="Failed"), pod("d", deleted=True)]
    result = CALC.utilization_replicas(4, 50, "cpu", pods, usage(a=1000, f=0, d=0), NOW)
    assert result.replicas == 4  # a at 200%, pending p counted as 0: 100% of 2, ratio 1.0


def test_average_value_targets() -> None:
    pods = [pod("a"), pod("b")]
    result = CALC.value_replicas(2, 200, "cpu", pods, usage(a=400, b=400), NOW)
    assert (result.replicas, result.raw_average, result.utilization) == (4, 400, None)


@pytest.mark.parametrize(
    ("pods", "metrics", "message"),
    [
        ([], {}, "no pods returned by selector while calculating replica count"),
        ([pod("a")], {}, "did not receive metrics for any ready pods"),
    ],
)
def test_errors_carry_kubes_messages(
    pods: list[dict[str, Any]], metrics: dict[str, PodMetric], message: str
) -> None:
    with pytest.raises(ReplicaError, match=message):
        CALC.utilization_replicas(1, 50, "cpu", pods, metrics, NOW)


def test_a_container_without_a_request_is_an_error() -> None:
    bare = pod("a")
    bare["spec"]["containers"][0]["resources"] = {}
    with pytest.raises(ReplicaError, match="missing request for cpu"):
        CALC.utilization_replicas(1, 50, "cpu", [bare], usage(a=10), NOW)
