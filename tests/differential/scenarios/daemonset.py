"""DaemonSets: placement on nodes the scenarios create, label, taint, cordon and delete, failed
pods, rolling updates (maxUnavailable, maxSurge), OnDelete, rollback and revision history.

Nodes are cluster objects: each scenario creates its own (names no other scenario uses), plays
their kubelet's heartbeat so the Go node lifecycle controller leaves them alone, and deletes
them at the end. The DaemonSets name their update strategy and history limit, and carry the
``deprecated.daemonset.template.generation`` annotation kube-apiserver keeps (1 on create, one
more per template change, which the template patches below bump too): what a kube-apiserver
stores whatever the client sends, so the snapshots compare the controllers, not the servers'
defaulting. Pods are not bound unless a step says so (the scheduler's part), so a pod the
DaemonSet deletes is gone at once; where the node a pod is for is the point, the snapshot
keeps it (``pod_nodes``), elsewhere it is left out because kube-controller-manager walks
nodes in random order when it picks the next ones to update.
"""

from __future__ import annotations

from typing import Any

from ..scenario import (
    Bind,
    Create,
    CreateNode,
    DeleteNode,
    Kubelet,
    Patch,
    PatchNode,
    Scenario,
    Settle,
)

KINDS = ("daemonsets", "controllerrevisions", "pods", "events")
GENERATION = "deprecated.daemonset.template.generation"


def daemon_set(
    name: str = "agent",
    *,
    strategy: dict[str, Any] | None = None,
    history: int = 10,
    **pod_spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "annotations": {GENERATION: "1"}},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "updateStrategy": strategy
            or {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "revisionHistoryLimit": history,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "agent:1"}], **pod_spec},
            },
        },
    }


def image(tag: str, generation: int) -> dict[str, Any]:
    """A template change, with the template generation kube-apiserver would write."""
    return {
        "metadata": {"annotations": {GENERATION: str(generation)}},
        "spec": {"template": {"spec": {"containers": [{"name": "main", "image": tag}]}}},
    }


def taints(*entries: tuple[str, str]) -> dict[str, Any]:
    return {"spec": {"taints": [{"key": k, "effect": e} for k, e in entries]}}


NODES = {"pod_nodes": True}

SCENARIOS = [
    Scenario(
        "daemonset/one-pod-per-node",
        (
            CreateNode("ds-basic-1"),
            CreateNode("ds-basic-2"),
            Create(daemon_set()),
            Settle(),
            Bind("app=agent"),
            Kubelet("app=agent"),
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="one pod per node, pinned by node affinity; bound and Ready they are available",
    ),
    Scenario(
        "daemonset/new-node-gets-a-pod-unless-tainted",
        (
            CreateNode("ds-add-1"),
            Create(daemon_set()),
            Settle(),
            CreateNode("ds-add-2"),
            Settle(),
            CreateNode("ds-add-3", taints=({"key": "gpu", "effect": "NoSchedule"},)),
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="a node added later gets a pod; one with an untolerated NoSchedule taint does not",
    ),
    Scenario(
        "daemonset/node-selector-follows-labels",
        (
            CreateNode("ds-label-1", labels={"disk": "ssd"}),
            CreateNode("ds-label-2"),
            Create(daemon_set(nodeSelector={"disk": "ssd"})),
            Settle(),
            PatchNode("ds-label-1", {"metadata": {"labels": {"disk": "hdd"}}}),
            Settle(),
            PatchNode("ds-label-2", {"metadata": {"labels": {"disk": "ssd"}}}),
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="nodeSelector disk=ssd: the pod follows the label from node to node",
    ),
    Scenario(
        "daemonset/taints",
        (
            CreateNode("ds-taint-1"),
            CreateNode("ds-taint-2"),
            Create(daemon_set()),
            Settle(),
            PatchNode("ds-taint-1", taints(("maintenance", "NoSchedule"))),
            Settle(),
            PatchNode("ds-taint-2", taints(("maintenance", "NoExecute"))),
            Settle(),
            PatchNode("ds-taint-2", {"spec": {"taints": None}}),
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="NoSchedule keeps the pod there (misscheduled), NoExecute removes it, untainting "
        "brings it back",
    ),
    Scenario(
        "daemonset/cordoned-node-keeps-its-pod",
        (
            CreateNode("ds-cordon-1", unschedulable=True),
            CreateNode("ds-cordon-2"),
            Create(daemon_set()),
            Settle(),
            PatchNode("ds-cordon-2", {"spec": {"unschedulable": True}}),
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="daemon pods tolerate cordons: a pod on every node, cordoned or not",
    ),
    Scenario(
        "daemonset/failed-pod-is-replaced",
        (
            CreateNode("ds-failed-1"),
            Create(daemon_set()),
            Settle(),
            Kubelet("app=agent", phase="Failed", exit_code=1),
            Settle(),
            Kubelet("app=agent", phase="Failed", exit_code=1),
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="a Failed pod is deleted (Warning FailedDaemonPod) and re-created, twice",
    ),
    Scenario(
        "daemonset/unbound-pod-of-a-deleted-node",
        (
            CreateNode("ds-gone-1"),
            CreateNode("ds-gone-2"),
            Create(daemon_set()),
            Settle(),
            DeleteNode("ds-gone-2"),
            Settle(),
            Patch("daemonsets", "agent", {"metadata": {"annotations": {"touch": "1"}}}),
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="a deleted node wakes no DaemonSet; at its next sync the pod pinned there goes",
    ),
    Scenario(
        "daemonset/rolling-update",
        (
            CreateNode("ds-roll-1"),
            CreateNode("ds-roll-2"),
            Create(daemon_set()),
            Settle(),
            Kubelet("app=agent"),
            Settle(),
            Patch("daemonsets", "agent", image("agent:2", 2)),
            Settle(),
            Kubelet("app=agent"),
            Settle(),
            Kubelet("app=agent"),
            Settle(),
        ),
        kinds=KINDS,
        doc="maxUnavailable 1: one node's pod at a time, the next once the new one is Ready; "
        "a second ControllerRevision",
    ),
    Scenario(
        "daemonset/rolling-update-with-surge",
        (
            CreateNode("ds-surge-1"),
            CreateNode("ds-surge-2"),
            Create(
                daemon_set(
                    strategy={
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
                    }
                )
            ),
            Settle(),
            Kubelet("app=agent"),
            Settle(),
            Patch("daemonsets", "agent", image("agent:2", 2)),
            Settle(),
            Kubelet("app=agent"),
            Settle(),
            Kubelet("app=agent"),
            Settle(),
        ),
        kinds=KINDS,
        doc="maxSurge 1: a new pod beside the old one, which goes once the new one is available",
    ),
    Scenario(
        "daemonset/on-delete",
        (
            CreateNode("ds-ondelete-1"),
            Create(daemon_set(strategy={"type": "OnDelete"})),
            Settle(),
            Patch("daemonsets", "agent", image("agent:2", 2)),
            Settle(),
            CreateNode("ds-ondelete-2"),
            Settle(),
            Kubelet("app=agent", phase="Failed", exit_code=1, count=1),  # the older pod
            Settle(),
        ),
        kinds=KINDS,
        extra=NODES,
        doc="OnDelete replaces nothing by itself; a new node's pod, and a pod that goes and "
        "comes back, have the new template",
    ),
    Scenario(
        "daemonset/rollback",
        (
            CreateNode("ds-undo-1"),
            Create(daemon_set()),
            Settle(),
            Patch("daemonsets", "agent", image("agent:2", 2)),
            Settle(),
            Patch("daemonsets", "agent", image("agent:1", 3)),
            Settle(),
        ),
        kinds=KINDS,
        doc="back to the first template: its revision is renumbered 3, no new one is made",
    ),
    Scenario(
        "daemonset/history-limit",
        (
            CreateNode("ds-history-1"),
            Create(daemon_set(strategy={"type": "OnDelete"}, history=1)),
            Settle(),
            Patch("daemonsets", "agent", image("agent:2", 2)),
            Settle(),
            Patch("daemonsets", "agent", image("agent:3", 3)),
            Settle(),
        ),
        kinds=KINDS,
        doc="revisionHistoryLimit 1: the oldest unused revision goes; the one pods run stays",
    ),
]
