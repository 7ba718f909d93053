"""The knobs of the simulated cluster, with the defaults ``kcm`` uses in embedded mode."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcm.models import parse_quantity

__all__ = [
    "DURATION_ANNOTATION",
    "EXIT_CODE_ANNOTATION",
    "FAILURE_ANNOTATION",
    "READY_ANNOTATION",
    "SIMULATED_LABEL",
    "SimulationConfig",
    "node_failed",
    "parse_duration",
]

SIMULATED_LABEL = "kcm.dev/simulated"
"""Label (value ``"true"``) on every simulated Node. The scheduler binds only to such nodes
and the kubelet plays only their pods, so a simulation never touches real nodes."""

DURATION_ANNOTATION = "kcm.dev/simulate-duration"
"""Pod annotation: how long the containers of a run-to-completion pod (restartPolicy Never or
OnFailure) run before they exit, as seconds or a Go duration (``90s``, ``2m``)."""

EXIT_CODE_ANNOTATION = "kcm.dev/simulate-exit-code"
"""Pod annotation: the exit code those containers end with (default 0: Succeeded; otherwise
Failed, or restarted in place with restartPolicy OnFailure)."""

READY_ANNOTATION = "kcm.dev/simulate-ready"
"""Pod annotation: the simulated outcome of the pod's readiness probes. ``"false"`` keeps a
running pod NotReady (and makes a Ready one NotReady); removing it, or any other value, lets
it become Ready. Services see the change through their Endpoints and EndpointSlices."""

FAILURE_ANNOTATION = "kcm.dev/simulate-node-failure"
"""Node annotation: ``"true"`` makes a simulated node fail as a machine that lost power or
network does: its kubelet stops renewing the Lease, posting status and playing its pods (so
pods being deleted stay Terminating). Removing it (or any other value) brings the node back:
status and Lease at the next heartbeat, its pods played again."""


def node_failed(node: object) -> bool:
    """Whether the Node carries :data:`FAILURE_ANNOTATION` ``"true"``."""
    metadata = getattr(node, "metadata", None)
    annotations = getattr(metadata, "annotations", None) or {}
    return str(annotations.get(FAILURE_ANNOTATION, "")).lower() == "true"


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds from a Go duration (``15s``, ``1m30s``, ``500ms``) or a plain number.

    Raises:
        ValueError: not a duration, or negative.
    """
    value = str(text).strip()
    try:
        seconds = float(value)
    except ValueError:
        pos, seconds = 0, 0.0
        for match in _PART.finditer(value):
            if match.start() != pos:
                break
            seconds += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if pos != len(value) or not value:
            raise ValueError(
                f"{text!r} is not a duration (e.g. 15s, 1m30s, 500ms, or seconds)"
            ) from None
    if not seconds >= 0:
        raise ValueError(f"{text!r}: a duration must not be negative")
    return seconds


@dataclass(frozen=True, kw_only=True)
class SimulationConfig:
    """How many nodes to simulate, how big they are, and how fast pods progress.

    Attributes:
        nodes: simulated Nodes, named ``<node_prefix>1`` ... ``<node_prefix>N``. Simulated
            nodes numbered above ``nodes`` (left from an earlier, larger run) are deleted.
        node_prefix: name prefix of the simulated nodes.
        node_cpu, node_memory, node_pods: each node's capacity (= allocatable).
        heartbeat_period: seconds between renewals of each node's Lease in
            ``kube-node-lease`` (the kubelet's 10 s).
        lease_duration: ``leaseDurationSeconds`` of those Leases (the kubelet's 40 s).
        status_period: seconds between refreshes of each node's Ready condition heartbeat.
        pod_start_delay: seconds from a pod being bound to it Running.
        pod_ready_delay: seconds from Running to Ready.
        job_duration: seconds a run-to-completion pod runs before its containers exit 0
            (override per pod with the ``kcm.dev/simulate-duration`` annotation).
        scheduler_workers, kubelet_workers: concurrent binds / pod status writes.
        assign_pod_cidrs: give each node ``10.244.<n>.0/24`` as its pod CIDR when it has
            none (standing in for node IPAM); False when the ``nodeipam`` controller
            allocates them, and then a node's pods wait in Pending for its CIDR.

    Raises:
        ValueError: a count or duration is out of range, or a capacity is not a quantity.
    """

    nodes: int = 3
    node_prefix: str = "kcm-node-"
    node_cpu: str = "4"
    node_memory: str = "16Gi"
    node_pods: int = 110
    heartbeat_period: float = 10.0
    lease_duration: int = 40
    status_period: float = 60.0
    pod_start_delay: float = 1.0
    pod_ready_delay: float = 1.0
    job_duration: float = 5.0
    scheduler_workers: int = 4
    kubelet_workers: int = 8
    assign_pod_cidrs: bool = True

    def __post_init__(self) -> None:
        if self.nodes < 0:
            raise ValueError(f"nodes must not be negative, got {self.nodes}")
        if self.node_pods < 1:
            raise ValueError(f"node_pods must be at least 1, got {self.node_pods}")
        for field in ("heartbeat_period", "status_period"):
            if not getattr(self, field) > 0:
                raise ValueError(f"{field} must be positive, got {getattr(self, field)}")
        for field in ("pod_start_delay", "pod_ready_delay", "job_duration"):
            if not getattr(self, field) >= 0:
                raise ValueError(f"{field} must not be negative, got {getattr(self, field)}")
        if self.lease_duration < 1:
            raise ValueError(f"lease_duration must be at least 1, got {self.lease_duration}")
        if self.scheduler_workers < 1 or self.kubelet_workers < 1:
            raise ValueError("scheduler_workers and kubelet_workers must be at least 1")
        for field in ("node_cpu", "node_memory"):
            try:
                parse_quantity(getattr(self, field))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{field} {getattr(self, field)!r} is not a quantity") from exc

    def node_names(self) -> list[str]:
        """The simulated nodes' names, in order."""
        return [f"{self.node_prefix}{i}" for i in range(1, self.nodes + 1)]
