"""The simulated scheduler's filters: cordons, taints, node affinity and required pod
anti-affinity, with kube-scheduler's reasons."""

from __future__ import annotations

from kcm.models import Node, NodeSpec, ObjectMeta, Pod, PodSpec, Taint, Toleration
from kcm.models.core_v1 import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    PodAntiAffinity,
)
from kcm.models.meta_v1 import LabelSelector
from kcm.simulation._filters import (
    ANTI_AFFINITY,
    EXISTING_ANTI_AFFINITY,
    NODE_AFFINITY,
    UNSCHEDULABLE,
    anti_affinity_reason,
    node_affinity_reason,
    taint_reason,
    unschedulable_reason,
)

HOSTNAME = "kubernetes.io/hostname"


def node(name: str, **labels: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={HOSTNAME: name, **labels}))


def pod(
    name: str,
    ns: str = "default",
    *,
    labels: dict[str, str] | None = None,
    avoid: dict[str, str] | None = None,
    key: str = HOSTNAME,
    **term: object,
) -> Pod:
    affinity = None
    if avoid is not None:
        affinity = Affinity(
            pod_anti_affinity=PodAntiAffinity(
                required_during_scheduling_ignored_during_execution=[
                    PodAffinityTerm(
                        label_selector=LabelSelector(match_labels=avoid),
                        topology_key=key,
                        **term,  # type: ignore[arg-type]
                    )
                ]
            )
        )
    return Pod(
        metadata=ObjectMeta(name=name, namespace=ns, uid=name, labels=labels),
        spec=PodSpec(affinity=affinity),
    )


def test_cordoned_nodes_take_only_pods_that_tolerate_it() -> None:
    cordoned = Node(metadata=ObjectMeta(name="n"), spec=NodeSpec(unschedulable=True))
    assert unschedulable_reason(pod("p"), cordoned) == UNSCHEDULABLE
    daemon = Pod(
        spec=PodSpec(
            tolerations=[
                Toleration(
                    key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"
                )
            ]
        )
    )
    assert unschedulable_reason(daemon, cordoned) is None
    assert unschedulable_reason(pod("p"), node("n")) is None


def test_no_execute_taints_keep_pods_off_too() -> None:
    tainted = Node(
        metadata=ObjectMeta(name="n"), spec=NodeSpec(taints=[Taint(key="k", effect="NoExecute")])
    )
    assert taint_reason(pod("p"), tainted) == "node(s) had untolerated taint {k: }"


def test_node_affinity_pins() -> None:
    pinned = Pod(
        spec=PodSpec(
            affinity=Affinity(
                node_affinity=NodeAffinity(
                    required_during_scheduling_ignored_during_execution=NodeSelector(
                        node_selector_terms=[
                            NodeSelectorTerm(
                                match_fields=[
                                    NodeSelectorRequirement(
                                        key="metadata.name", operator="In", values=["n2"]
                                    )
                                ]
                            )
                        ]
                    )
                )
            )
        )
    )
    assert node_affinity_reason(pinned, node("n1")) == NODE_AFFINITY
    assert node_affinity_reason(pinned, node("n2")) is None


def test_anti_affinity_by_hostname_both_ways() -> None:
    nodes = [node("n1"), node("n2")]
    residents = {"n1": [pod("web-1", labels={"app": "web"})], "n2": []}

    def pods_on(name: str) -> list[Pod]:
        return residents[name]

    newcomer = pod("web-2", labels={"app": "web"}, avoid={"app": "web"})
    assert anti_affinity_reason(newcomer, nodes[0], nodes, pods_on) == ANTI_AFFINITY
    assert anti_affinity_reason(newcomer, nodes[1], nodes, pods_on) is None
    # A pod in another namespace is not selected unless the term names it.
    elsewhere = pod("web-3", "other", labels={"app": "web"}, avoid={"app": "web"})
    assert anti_affinity_reason(elsewhere, nodes[0], nodes, pods_on) is None
    named = pod("web-4", "other", avoid={"app": "web"}, namespaces=["default"])
    assert anti_affinity_reason(named, nodes[0], nodes, pods_on) == ANTI_AFFINITY
    everywhere = pod("web-5", "other", avoid={"app": "web"}, namespace_selector=LabelSelector())
    assert anti_affinity_reason(everywhere, nodes[0], nodes, pods_on) == ANTI_AFFINITY
    # The resident's own rule keeps matching pods away.
    residents["n1"] = [pod("loner", avoid={"app": "web"})]
    plain = pod("web-6", labels={"app": "web"})
    assert anti_affinity_reason(plain, nodes[0], nodes, pods_on) == EXISTING_ANTI_AFFINITY
    assert anti_affinity_reason(plain, nodes[1], nodes, pods_on) is None
    # Itself (already assumed on the node) does not count.
    residents["n1"] = [newcomer]
    assert anti_affinity_reason(newcomer, nodes[0], nodes, pods_on) is None


def test_anti_affinity_by_wider_domains() -> None:
    nodes = [node("n1", zone="a"), node("n2", zone="a"), node("n3", zone="b"), node("n4")]
    residents = {"n1": [pod("db-1", labels={"app": "db"})], "n2": [], "n3": [], "n4": []}
    newcomer = pod("db-2", labels={"app": "db"}, avoid={"app": "db"}, key="zone")
    reasons = [anti_affinity_reason(newcomer, n, nodes, residents.__getitem__) for n in nodes]
    # Same zone as db-1: refused; another zone, or no zone label: fine.
    assert reasons == [ANTI_AFFINITY, ANTI_AFFINITY, None, None]
