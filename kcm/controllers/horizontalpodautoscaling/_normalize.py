"""From the metrics' proposal to the replica count the HPA sets (kube's
``normalizeDesiredReplicas`` and ``normalizeDesiredReplicasWithBehaviors``): stabilization
windows over recent recommendations, the scale rate limits (the fixed 2x/4 rule without
``spec.behavior``, its Pods/Percent policies with it) and min/max replicas.

:class:`History` keeps each HPA's recent recommendations and scale events, timed on the
controller's clock (seconds of ``monotonic()``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_SCALE_DOWN", "DEFAULT_SCALE_UP", "History", "Normalized", "with_defaults"]

_INT32_MAX = 2**31 - 1
_INT32_MIN = -(2**31)
_SCALE_UP_LIMIT_FACTOR = 2.0
_SCALE_UP_LIMIT_MINIMUM = 4.0

DEFAULT_SCALE_UP: Mapping[str, Any] = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
"""autoscaling/v2's defaults for ``behavior.scaleUp``."""

DEFAULT_SCALE_DOWN: Mapping[str, Any] = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}
"""autoscaling/v2's defaults for ``behavior.scaleDown`` (its window is the controller's
``--horizontal-pod-autoscaler-downscale-stabilization``)."""


def with_defaults(rules: Mapping[str, Any] | None, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``rules`` with kube-apiserver's defaults for what it leaves out."""
    out = dict(rules or {})
    for key, value in defaults.items():
        if out.get(key) is None:
            out[key] = value
    return out


@dataclass(frozen=True, slots=True)
class Normalized:
    """The replica count to set, and the conditions that explain it."""

    replicas: int
    able_reason: str
    able_message: str
    limited: bool
    limited_reason: str
    limited_message: str


@dataclass(slots=True)
class _Event:
    change: int
    at: float
    outdated: bool = False


def _rules_limit(
    current: int, events: list[_Event], rules: Mapping[str, Any], now: float, *, up: bool
) -> int:
    """kube's ``calculateScaleUpLimitWithScalingRules`` / ``calculateScaleDownLimitWith
    Behaviors``: the furthest each policy allows from the count at its period's start,
    combined by ``selectPolicy``."""
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    largest_change = select != "Min"
    pick = max if largest_change == up else min
    result = _INT32_MIN if pick is max else _INT32_MAX
    for policy in rules.get("policies") or ():
        cutoff = now - float(policy.get("periodSeconds") or 0)
        changed = sum(e.change for e in events if e.at > cutoff)
        value = int(policy.get("value") or 0)
        if up:
            start = current - changed
            proposed = (
                start + value
                if policy.get("type") == "Pods"
                else math.ceil(start * (1 + value / 100))
            )
        else:
            start = current + changed
            proposed = (
                start - value if policy.get("type") == "Pods" else int(start * (1 - value / 100))
            )
        result = pick(result, proposed)
    return result


@dataclass
class History:
    """One HPA's recommendations and scale events (kube keeps them in memory, per key)."""

    downscale_window: float = 300.0
    """``--horizontal-pod-autoscaler-downscale-stabilization``, seconds."""
    recommendations: list[tuple[int, float]] = field(default_factory=list)
    up_events: list[_Event] = field(default_factory=list)
    down_events: list[_Event] = field(default_factory=list)

    def record_initial(self, current: int, now: float) -> None:
        """The first recommendation is the current count (``recordInitialRecommendation``)."""
        if not self.recommendations:
            self.recommendations.append((current, now))

    def _store(self, desired: int, now: float, old: int | None) -> None:
        if old is None:
            self.recommendations.append((desired, now))
        else:
            self.recommendations[old] = (desired, now)

    def normalize(
        self,
        behavior: Mapping[str, Any] | None,
        current: int,
        desired: int,
        min_replicas: int,
        max_replicas: int,
        now: float,
    ) -> Normalized:
        if behavior is None:
            return self._without_behavior(current, desired, min_replicas, max_replicas, now)
        return self._with_behavior(behavior, current, desired, min_replicas, max_replicas, now)

    # -- without spec.behavior -------------------------------------------------------------

    def _without_behavior(
        self, current: int, desired: int, lo: int, hi: int, now: float
    ) -> Normalized:
        stabilized, old = desired, None
        cutoff = now - self.downscale_window
        for i, (rec, at) in enumerate(self.recommendations):
            if at < cutoff:
                old = i
            elif rec > stabilized:
                stabilized = rec
        self._store(desired, now, old)
        if stabilized != desired:
            able = (
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest "
                "recent recommendation",
            )
        else:
            able = ("ReadyForNewScale", "recommended size matches current size")
        scale_up_limit = int(max(_SCALE_UP_LIMIT_FACTOR * current, _SCALE_UP_LIMIT_MINIMUM))
        if hi > scale_up_limit:
            allowed_max, reason, message = scale_up_limit, *_UP_LIMIT
        else:
            allowed_max, reason, message = hi, *_TOO_MANY
        replicas = stabilized
        if stabilized < lo:
            replicas, reason, message = lo, *_TOO_FEW
        elif stabilized > allowed_max:
            replicas = allowed_max
        else:
            reason, message = _WITHIN
        return Normalized(replicas, *able, replicas != stabilized, reason, message)

    # -- with spec.behavior ----------------------------------------------------------------

    def _with_behavior(
        self,
        behavior: Mapping[str, Any],
        current: int,
        desired: int,
        lo: int,
        hi: int,
        now: float,
    ) -> Normalized:
        up_rules = with_defaults(behavior.get("scaleUp"), DEFAULT_SCALE_UP)
        down_rules = with_defaults(behavior.get("scaleDown"), DEFAULT_SCALE_DOWN)
        up_window = float(up_rules.get("stabilizationWindowSeconds") or 0)
        down_window = down_rules.get("stabilizationWindowSeconds")
        down_window = self.downscale_window if down_window is None else float(down_window)
        up_cutoff, down_cutoff = now - up_window, now - down_window
        up_rec = down_rec = desired
        old = None
        for i, (rec, at) in enumerate(self.recommendations):
            if at > up_cutoff:
                up_rec = min(rec, up_rec)
            if at > down_cutoff:
                down_rec = max(rec, down_rec)
            if at < up_cutoff and at < down_cutoff:
                old = i
        stabilized = min(max(current, up_rec), down_rec)
        self._store(desired, now, old)
        if stabilized == desired:
            able = ("ReadyForNewScale", "recommended size matches current size")
        elif desired >= current:
            able = (
                "ScaleUpStabilized",
                "recent recommendations were lower than current one, applying the lowest "
                "recent recommendation",
            )
        else:
            able = (
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest "
                "recent recommendation",
            )
        replicas, reason, message = stabilized, *_WITHIN
        if stabilized > current:
            limit = max(_rules_limit(current, self.up_events, up_rules, now, up=True), current)
            allowed, why = (limit, _UP_LIMIT) if hi > limit else (hi, _TOO_MANY)
            if stabilized > allowed:
                replicas, (reason, message) = allowed, why
        elif stabilized < current:
            limit = min(_rules_limit(current, self.down_events, down_rules, now, up=False), current)
            allowed, why = (limit, _DOWN_LIMIT) if lo < limit else (lo, _TOO_FEW)
            if stabilized < allowed:
                replicas, (reason, message) = allowed, why
        return Normalized(replicas, *able, replicas != stabilized, reason, message)

    def record_scale(
        self, behavior: Mapping[str, Any] | None, previous: int, new: int, now: float
    ) -> None:
        """Remember a rescale for the policies' periods (``storeScaleEvent``; only with
        ``spec.behavior``)."""
        if behavior is None:
            return
        if new > previous:
            rules = with_defaults(behavior.get("scaleUp"), DEFAULT_SCALE_UP)
            events, change = self.up_events, new - previous
        else:
            rules = with_defaults(behavior.get("scaleDown"), DEFAULT_SCALE_DOWN)
            events, change = self.down_events, previous - new
        longest = max((int(p.get("periodSeconds") or 0) for p in rules["policies"]), default=0)
        old = None
        for i, event in enumerate(events):
            if event.at < now - longest:
                event.outdated = True
            if event.outdated:
                old = i
        if old is None:
            events.append(_Event(change, now))
        else:
            events[old] = _Event(change, now)


_WITHIN = ("DesiredWithinRange", "the desired count is within the acceptable range")
_TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
_TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
_UP_LIMIT = (
    "ScaleUpLimit",
    "the desired replica count is increasing faster than the maximum scale rate",
)
_DOWN_LIMIT = (
    "ScaleDownLimit",
    "the desired replica count is decreasing faster than the maximum scale rate",
)
