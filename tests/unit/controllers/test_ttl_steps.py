"""The node TTL by cluster size: kube's boundaries, with hysteresis."""

from __future__ import annotations

from kcm.controllers.ttl import TTLSteps


def _grow(steps: TTLSteps, to: int) -> None:
    while steps.nodes < to:
        steps.added()


def _shrink(steps: TTLSteps, to: int) -> None:
    while steps.nodes > to:
        steps.removed()


def test_steps_up_past_each_maximum() -> None:
    steps = TTLSteps()
    for nodes, ttl in ((100, 0), (101, 15), (500, 15), (501, 30), (1001, 60), (2001, 300)):
        _grow(steps, nodes)
        assert steps.ttl == ttl, nodes
    _grow(steps, 10001)
    assert steps.ttl == 600


def test_steps_down_only_below_each_minimum() -> None:
    steps = TTLSteps()
    _grow(steps, 101)
    _shrink(steps, 90)
    assert steps.ttl == 15  # still in 90..500
    _shrink(steps, 89)
    assert steps.ttl == 0
    _grow(steps, 100)
    assert steps.ttl == 0  # and back up only above 100
