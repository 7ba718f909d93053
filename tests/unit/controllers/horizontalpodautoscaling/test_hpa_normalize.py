"""Stabilization windows, rate limits and min/max (kube's normalizeDesiredReplicas*)."""

from __future__ import annotations

from typing import Any

from kcm.controllers.horizontalpodautoscaling import History


def test_without_behavior_a_scale_down_waits_for_the_window() -> None:
    h = History(downscale_window=300)
    h.record_initial(5, 0)
    first = h.normalize(None, 5, 2, 1, 10, 10)
    assert (first.replicas, first.able_reason) == (5, "ScaleDownStabilized")
    assert not first.limited
    later = h.normalize(None, 5, 2, 1, 10, 311)  # the 5s are older than the window
    assert (later.replicas, later.able_reason) == (2, "ReadyForNewScale")


def test_without_behavior_scale_up_is_limited_to_double_or_four() -> None:
    h = History()
    h.record_initial(1, 0)
    up = h.normalize(None, 1, 10, 1, 20, 1)
    assert (up.replicas, up.limited, up.limited_reason) == (4, True, "ScaleUpLimit")
    capped = h.normalize(None, 4, 10, 1, 6, 2)
    assert (capped.replicas, capped.limited_reason) == (6, "TooManyReplicas")
    floor = History().normalize(None, 3, 0, 2, 6, 0)
    assert (floor.replicas, floor.limited_reason) == (2, "TooFewReplicas")
    within = History().normalize(None, 3, 5, 1, 6, 0)
    assert (within.replicas, within.limited, within.limited_reason) == (
        5,
        False,
        "DesiredWithinRange",
    )


def behavior(**rules: Any) -> dict[str, Any]:
    return rules


def test_behavior_pods_policy_limits_each_period() -> None:
    b = behavior(scaleUp={"policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]})
    h = History()
    h.record_initial(2, 0)
    first = h.normalize(b, 2, 10, 1, 20, 0)
    assert (first.replicas, first.limited_reason) == (4, "ScaleUpLimit")
    h.record_scale(b, 2, 4, 0)
    second = h.normalize(b, 4, 10, 1, 20, 30)  # 2 already added within the 60 s period
    assert second.replicas == 4
    third = h.normalize(b, 4, 10, 1, 20, 61)
    assert third.replicas == 6


def test_behavior_percent_and_select_policy() -> None:
    policies = [
        {"type": "Percent", "value": 50, "periodSeconds": 15},
        {"type": "Pods", "value": 1, "periodSeconds": 15},
    ]
    down_max = behavior(scaleDown={"policies": policies, "stabilizationWindowSeconds": 0})
    assert History().normalize(down_max, 10, 1, 1, 20, 0).replicas == 5  # largest change
    down_min = behavior(
        scaleDown={"policies": policies, "stabilizationWindowSeconds": 0, "selectPolicy": "Min"}
    )
    assert History().normalize(down_min, 10, 1, 1, 20, 0).replicas == 9
    disabled = behavior(scaleDown={"selectPolicy": "Disabled", "stabilizationWindowSeconds": 0})
    assert History().normalize(disabled, 10, 1, 1, 20, 0).replicas == 10


def test_behavior_scale_down_window_defaults_to_the_flag_and_up_window_holds_scale_ups() -> None:
    h = History(downscale_window=60)
    h.record_initial(5, 0)
    held = h.normalize(behavior(), 5, 2, 1, 10, 30)
    assert (held.replicas, held.able_reason) == (5, "ScaleDownStabilized")
    assert h.normalize(behavior(), 5, 2, 1, 10, 91).replicas == 2
    up = behavior(scaleUp={"stabilizationWindowSeconds": 60})
    h2 = History()
    h2.record_initial(2, 0)
    slow = h2.normalize(up, 2, 6, 1, 10, 10)
    assert (slow.replicas, slow.able_reason) == (2, "ScaleUpStabilized")
