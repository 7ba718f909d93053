"""Node health from the kubelet's two signals: Ready heartbeats and Lease renewals (§12).

The controller never trusts the node's timestamps: it keeps its own *probe time* per node,
taken from its clock whenever the Ready condition's ``lastHeartbeatTime`` or the Lease's
``renewTime`` changes. A node whose probe time is older than the grace period (the startup
grace before its first Ready condition) gets its kubelet-owned conditions set to Unknown.
:func:`assess` is kube-controller-manager's ``tryUpdateNodeHealth`` without the write.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import msgspec

from kcm.models import Node, NodeCondition, NodeStatus

__all__ = [
    "KUBELET_CONDITIONS",
    "HealthAssessment",
    "NodeHealth",
    "assess",
    "ready_condition",
]

KUBELET_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
"""The conditions set to Unknown when a node stops reporting (NetworkUnavailable is the
control plane's, not the kubelet's, and is left alone)."""

NEVER_UPDATED = ("NodeStatusNeverUpdated", "Kubelet never posted node status.")
STOPPED = ("NodeStatusUnknown", "Kubelet stopped posting node status.")


@dataclass(frozen=True)
class NodeHealth:
    """What the controller last saw of a node, and when (its own clock).

    Attributes:
        status: the node status last seen.
        probe_timestamp: when the node last proved it is alive.
        ready_transition_timestamp: when its Ready condition last changed, as seen here.
        lease_renew_time: the ``renewTime`` of its Lease last seen, if any.
    """

    status: NodeStatus | None
    probe_timestamp: datetime
    ready_transition_timestamp: datetime
    lease_renew_time: datetime | None = None


@dataclass(frozen=True)
class HealthAssessment:
    """The outcome of one look at a node.

    Attributes:
        health: what to remember (write it back after a successful status write, with the
            new status and ``ready_transition_timestamp`` = now, see :meth:`after_write`).
        grace_period: the grace period that applied.
        observed_ready: the Ready condition as the node had it (a stand-in Unknown one with
            the creation time if it had none).
        current_ready: the Ready condition after this look (None: the node has none yet).
        new_status: the status to write (conditions set to Unknown), or None.
        lease_renew_time: the Lease's ``renewTime`` seen this time.
    """

    health: NodeHealth
    grace_period: float
    observed_ready: NodeCondition
    current_ready: NodeCondition | None
    new_status: NodeStatus | None
    lease_renew_time: datetime | None = None

    def after_write(self, now: datetime) -> NodeHealth:
        """The health to remember once :attr:`new_status` was written."""
        return replace(
            self.health,
            status=self.new_status,
            ready_transition_timestamp=now,
            lease_renew_time=self.lease_renew_time,
        )


def ready_condition(status: NodeStatus | None) -> NodeCondition | None:
    """The Ready condition of ``status``, if any."""
    for condition in (status.conditions if status else None) or ():
        if condition.type == "Ready":
            return condition
    return None


def _seconds(when: datetime) -> datetime:
    return when.replace(microsecond=0)


def _unknown_conditions(node: Node, now: datetime) -> list[NodeCondition]:
    conditions = list((node.status.conditions if node.status else None) or ())
    by_type = {c.type: i for i, c in enumerate(conditions)}
    for kind in KUBELET_CONDITIONS:
        index = by_type.get(kind)
        if index is None:
            reason, message = NEVER_UPDATED
            conditions.append(
                NodeCondition(
                    type=kind,
                    status="Unknown",
                    reason=reason,
                    message=message,
                    last_heartbeat_time=node.metadata.creation_timestamp,
                    last_transition_time=_seconds(now),
                )
            )
        elif conditions[index].status != "Unknown":
            reason, message = STOPPED
            conditions[index] = msgspec.structs.replace(
                conditions[index],
                status="Unknown",
                reason=reason,
                message=message,
                last_transition_time=_seconds(now),
            )
    return conditions


def assess(
    node: Node,
    saved: NodeHealth | None,
    lease_renew_time: datetime | None,
    now: datetime,
    *,
    monitor_grace_period: float,
    startup_grace_period: float,
) -> HealthAssessment:
    """Update what is known of ``node`` and decide whether its conditions go Unknown.

    Args:
        node: the node as cached.
        saved: what was known before (None: first look).
        lease_renew_time: the ``renewTime`` of the node's Lease in ``kube-node-lease``.
        now: the controller's clock.
        monitor_grace_period, startup_grace_period: seconds.
    """
    status = node.status or NodeStatus()
    created = node.metadata.creation_timestamp or now
    current = ready_condition(status)
    health = saved
    if current is None:
        # Never posted: a stand-in Unknown condition from the creation time, startup grace.
        observed = NodeCondition(
            type="Ready",
            status="Unknown",
            last_heartbeat_time=created,
            last_transition_time=created,
        )
        grace = startup_grace_period
        if health is not None:
            health = replace(health, status=status)
        else:
            health = NodeHealth(status, created, created)
    else:
        observed = current
        grace = monitor_grace_period
    saved_condition = ready_condition(health.status) if health is not None else None
    saved_lease = health.lease_renew_time if health is not None else None
    if (
        health is None
        or (saved_condition is None and current is not None)
        or (saved_condition is not None and current is None)
    ):
        health = NodeHealth(status, now, now)
    elif (
        saved_condition is not None
        and current is not None
        and saved_condition.last_heartbeat_time != current.last_heartbeat_time
    ):
        transition = (
            now
            if saved_condition.last_transition_time != current.last_transition_time
            else health.ready_transition_timestamp
        )
        health = NodeHealth(status, now, transition)
    if lease_renew_time is not None and (saved_lease is None or saved_lease < lease_renew_time):
        health = replace(health, lease_renew_time=lease_renew_time, probe_timestamp=now)
    new_status: NodeStatus | None = None
    after = current
    if now > health.probe_timestamp + timedelta(seconds=grace):
        conditions = _unknown_conditions(node, now)
        candidate = msgspec.structs.replace(status, conditions=conditions)
        after = ready_condition(candidate)
        if after != observed:
            new_status = candidate
    return HealthAssessment(health, grace, observed, after, new_status, lease_renew_time)
