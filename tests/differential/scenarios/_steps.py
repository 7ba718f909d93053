"""Step sequences the scenarios share."""

from __future__ import annotations

from ..scenario import Kubelet, Settle


def made_ready(app: str, times: int = 1) -> tuple[Kubelet | Settle, ...]:
    """``times`` rounds of: the kubelet makes the pods labelled ``app`` Running and Ready, then
    the controllers settle (a rollout or an OrderedReady set needs a round per step)."""
    steps: list[Kubelet | Settle] = []
    for _ in range(times):
        steps += [Kubelet(f"app={app}"), Settle()]
    return tuple(steps)
