"""The DaemonSet controller's placement: the predicate per (node, DaemonSet), the tolerations
every daemon pod gets, the node pin, and which node updates matter."""

from __future__ import annotations

import msgspec
import pytest

from kcm.controllers.daemonset import (
    DAEMON_POD_TOLERATIONS,
    Placement,
    add_daemon_pod_tolerations,
    new_daemon_pod,
    node_should_run_daemon_pod,
    replace_node_name_affinity,
    should_ignore_node_update,
    target_node_name,
)
from kcm.models.apps_v1 import DaemonSet, DaemonSetSpec
from kcm.models.core_v1 import (
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    Pod,
    PodAntiAffinity,
    PodSpec,
    PodTemplateSpec,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from kcm.models.meta_v1 import LabelSelector, ObjectMeta


def ds(**spec: object) -> DaemonSet:
    return DaemonSet(
        metadata=ObjectMeta(name="agent", namespace="ns"),
        spec=DaemonSetSpec(
            selector=LabelSelector(match_labels={"app": "agent"}),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={"app": "agent"}),
                spec=PodSpec(containers=[Container(name="c", image="i")], **spec),  # type: ignore[arg-type]
            ),
        ),
    )


def node(
    name: str = "n1", *taints: Taint, labels: dict[str, str] | None = None, **spec: object
) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, labels=labels),
        spec=NodeSpec(taints=list(taints) or None, **spec),  # type: ignore[arg-type]
    )


def taint(key: str, effect: str, value: str | None = None) -> Taint:
    return Taint(key=key, value=value, effect=effect)


RUN = Placement(True, True)
STAY = Placement(False, True)
NEVER = Placement(False, False)


@pytest.mark.parametrize(
    ("the_node", "placement"),
    [
        (node(), RUN),
        (node("n1", unschedulable=True), RUN),  # spec.unschedulable is not looked at
        (node("n1", taint("node.kubernetes.io/unschedulable", "NoSchedule")), RUN),
        (node("n1", taint("node.kubernetes.io/not-ready", "NoExecute")), RUN),
        (node("n1", taint("node.kubernetes.io/unreachable", "NoExecute")), RUN),
        (node("n1", taint("node.kubernetes.io/disk-pressure", "NoSchedule")), RUN),
        (node("n1", taint("node.kubernetes.io/memory-pressure", "NoSchedule")), RUN),
        (node("n1", taint("node.kubernetes.io/pid-pressure", "NoSchedule")), RUN),
        # not-ready NoSchedule is not tolerated (only its NoExecute): placed no more, kept.
        (node("n1", taint("node.kubernetes.io/not-ready", "NoSchedule")), STAY),
        (node("n1", taint("node.kubernetes.io/network-unavailable", "NoSchedule")), STAY),
        (node("n1", taint("dedicated", "NoSchedule", "gpu")), STAY),
        (node("n1", taint("dedicated", "NoExecute", "gpu")), NEVER),
        (node("n1", taint("dedicated", "PreferNoSchedule")), RUN),
        (
            node("n1", taint("dedicated", "NoSchedule"), taint("evict", "NoExecute")),
            NEVER,
        ),
    ],
)
def test_taints_decide_placement(the_node: Node, placement: Placement) -> None:
    assert node_should_run_daemon_pod(the_node, ds()) == placement


def test_own_tolerations_count() -> None:
    tolerant = ds(tolerations=[Toleration(key="dedicated", operator="Exists")])
    assert node_should_run_daemon_pod(node("n1", taint("dedicated", "NoExecute")), tolerant) == RUN
    host = ds(host_network=True)
    unavailable = node("n1", taint("node.kubernetes.io/network-unavailable", "NoSchedule"))
    assert node_should_run_daemon_pod(unavailable, host) == RUN


def test_node_selector_affinity_and_node_name() -> None:
    ssd = ds(node_selector={"disk": "ssd"})
    assert node_should_run_daemon_pod(node("n1", labels={"disk": "ssd"}), ssd) == RUN
    assert node_should_run_daemon_pod(node("n1", labels={"disk": "hdd"}), ssd) == NEVER
    # Not matching wins over taints: nothing may even keep running.
    tainted = node("n1", taint("x", "NoSchedule"), labels={"disk": "hdd"})
    assert node_should_run_daemon_pod(tainted, ssd) == NEVER
    affinity = Affinity(
        node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(
                        match_expressions=[
                            NodeSelectorRequirement(key="zone", operator="In", values=["a"])
                        ]
                    )
                ]
            )
        )
    )
    zoned = ds(affinity=affinity)
    assert node_should_run_daemon_pod(node("n1", labels={"zone": "a"}), zoned) == RUN
    assert node_should_run_daemon_pod(node("n1", labels={"zone": "b"}), zoned) == NEVER
    pinned = ds(node_name="n2")
    assert node_should_run_daemon_pod(node("n1"), pinned) == NEVER
    assert node_should_run_daemon_pod(node("n2"), pinned) == RUN


def test_daemon_pod_tolerations_are_added_or_replace_bounded_ones() -> None:
    keys = [(t.key, t.effect) for t in DAEMON_POD_TOLERATIONS]
    assert keys == [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
    assert all(
        t.operator == "Exists" and t.toleration_seconds is None for t in DAEMON_POD_TOLERATIONS
    )
    own = Toleration(key="gpu", operator="Exists")
    bounded = Toleration(
        key="node.kubernetes.io/not-ready",
        operator="Exists",
        effect="NoExecute",
        toleration_seconds=300,
    )
    spec = add_daemon_pod_tolerations(PodSpec(tolerations=[own, bounded]))
    assert spec.tolerations is not None
    assert list(spec.tolerations) == [own, DAEMON_POD_TOLERATIONS[0], *DAEMON_POD_TOLERATIONS[1:]]
    host = add_daemon_pod_tolerations(PodSpec(host_network=True))
    assert host.tolerations is not None
    assert host.tolerations[-1].key == "node.kubernetes.io/network-unavailable"
    # Idempotent.
    assert add_daemon_pod_tolerations(spec) == spec


def test_new_daemon_pod_is_the_template_on_the_node() -> None:
    pod = new_daemon_pod(ds(), "n7")
    assert pod.spec is not None
    assert pod.spec.node_name == "n7"
    assert pod.metadata.namespace == "ns"
    assert pod.metadata.labels == {"app": "agent"}
    assert len(pod.spec.tolerations or ()) == 6


def _pin(values: list[str]) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_fields=[NodeSelectorRequirement(key="metadata.name", operator="In", values=values)]
    )


def test_node_name_affinity_replaces_only_the_required_terms() -> None:
    fresh = replace_node_name_affinity(None, "n1")
    assert fresh.node_affinity is not None
    required = fresh.node_affinity.required_during_scheduling_ignored_during_execution
    assert required == NodeSelector(node_selector_terms=[_pin(["n1"])])
    preferred = [PreferredSchedulingTerm(weight=1, preference=_pin(["n9"]))]
    anti = PodAntiAffinity()
    existing = Affinity(
        node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=[_pin(["elsewhere"])]
            ),
            preferred_during_scheduling_ignored_during_execution=preferred,
        ),
        pod_anti_affinity=anti,
    )
    replaced = replace_node_name_affinity(existing, "n2")
    assert replaced.pod_anti_affinity == anti
    assert replaced.node_affinity is not None
    assert replaced.node_affinity.preferred_during_scheduling_ignored_during_execution == preferred
    assert (
        replaced.node_affinity.required_during_scheduling_ignored_during_execution
        == NodeSelector(node_selector_terms=[_pin(["n2"])])
    )


def test_target_node_name() -> None:
    bound = Pod(spec=PodSpec(node_name="n1", affinity=replace_node_name_affinity(None, "n2")))
    assert target_node_name(bound) == "n1"
    assert (
        target_node_name(Pod(spec=PodSpec(affinity=replace_node_name_affinity(None, "n2")))) == "n2"
    )
    assert target_node_name(Pod(spec=PodSpec())) is None
    assert target_node_name(Pod()) is None
    two = Affinity(
        node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=[_pin(["a", "b"])]
            )
        )
    )
    assert target_node_name(Pod(spec=PodSpec(affinity=two))) is None


def _status_node(rv: str, heartbeat: str, ready: str = "True", **labels: str) -> Node:
    from datetime import datetime

    return Node(
        metadata=ObjectMeta(name="n1", resource_version=rv, labels=labels or None),
        status=NodeStatus(
            conditions=[
                NodeCondition(
                    type="Ready",
                    status=ready,
                    last_heartbeat_time=datetime.fromisoformat(heartbeat),
                ),
                NodeCondition(type="DiskPressure", status="False"),
            ]
        ),
    )


def test_heartbeats_are_ignored_other_node_changes_are_not() -> None:
    old = _status_node("1", "2026-01-01T00:00:00+00:00")
    beat = _status_node("2", "2026-01-01T00:00:10+00:00")
    assert should_ignore_node_update(old, beat)
    assert not should_ignore_node_update(
        old, _status_node("2", "2026-01-01T00:00:10+00:00", "False")
    )
    assert not should_ignore_node_update(old, _status_node("2", "2026-01-01T00:00:10+00:00", x="y"))
    tainted = msgspec.structs.replace(
        beat, spec=NodeSpec(taints=[Taint(key="k", effect="NoSchedule")])
    )
    assert not should_ignore_node_update(old, tainted)
    assert should_ignore_node_update(
        Node(metadata=ObjectMeta(name="n")), Node(metadata=ObjectMeta(name="n"))
    )
