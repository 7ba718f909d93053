"""The kit's placement helpers: taints against tolerations, node selectors and required node
affinity (kube's ``ToleratesTaint``/``FindMatchingUntoleratedTaint`` and ``nodeaffinity``), and
the template hash shared by Deployments and DaemonSets."""

from __future__ import annotations

import pytest

from kcm.controllerkit import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    add_or_update_toleration,
    compute_template_hash,
    node_selector_matches,
    node_selector_term_matches,
    prune_empty,
    required_node_affinity_matches,
    taint_text,
    tolerates_taint,
    untolerated_taint,
)
from kcm.models.core_v1 import (
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodSpec,
    PodTemplateSpec,
    Taint,
    Toleration,
)
from kcm.models.meta_v1 import ObjectMeta

# -- taints and tolerations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        (Toleration(key="k", operator="Equal", value="v"), Taint(key="k", value="v"), True),
        (Toleration(key="k", value="v"), Taint(key="k", value="v", effect=NO_SCHEDULE), True),
        (Toleration(key="k", value="v"), Taint(key="k", value="w", effect=NO_SCHEDULE), False),
        (Toleration(key="k", operator="Exists"), Taint(key="k", value="w"), True),
        (Toleration(key="k", operator="Exists"), Taint(key="j"), False),
        (Toleration(operator="Exists"), Taint(key="anything", effect=NO_EXECUTE), True),
        # An empty key matches every key, Equal still compares the value (Go's rule).
        (Toleration(value="v"), Taint(key="a", value="v"), True),
        (Toleration(value="v"), Taint(key="a", value="x"), False),
        (
            Toleration(key="k", operator="Exists", effect=NO_SCHEDULE),
            Taint(key="k", effect=NO_EXECUTE),
            False,
        ),
        (
            Toleration(key="k", operator="Exists", effect=NO_EXECUTE),
            Taint(key="k", effect=NO_EXECUTE),
            True,
        ),
        (Toleration(key="k", operator="Exists"), Taint(key="k", effect=PREFER_NO_SCHEDULE), True),
        (Toleration(key="k", operator="Gt", value="1"), Taint(key="k", value="2"), False),
        (Toleration(key="k"), Taint(key="k"), True),  # no value on either side
    ],
)
def test_tolerates_taint_follows_kubes_rules(
    toleration: Toleration, taint: Taint, tolerated: bool
) -> None:
    assert tolerates_taint(toleration, taint) is tolerated


def test_untolerated_taint_looks_only_at_the_effects_asked_for() -> None:
    taints = [
        Taint(key="soft", effect=PREFER_NO_SCHEDULE),
        Taint(key="a", value="1", effect=NO_SCHEDULE),
        Taint(key="b", effect=NO_EXECUTE),
    ]
    assert untolerated_taint(taints, []) == taints[1]
    a = Toleration(key="a", operator="Exists")
    assert untolerated_taint(taints, [a]) == taints[2]
    assert untolerated_taint(taints, [a], effects=(NO_SCHEDULE,)) is None
    assert untolerated_taint(taints, [Toleration(operator="Exists")]) is None
    assert untolerated_taint(None, None) is None


def test_add_or_update_toleration_replaces_by_everything_but_seconds() -> None:
    bounded = Toleration(key="k", operator="Exists", effect=NO_EXECUTE, toleration_seconds=300)
    other = Toleration(key="j", operator="Exists")
    unbounded = Toleration(key="k", operator="Exists", effect=NO_EXECUTE)
    assert add_or_update_toleration([other, bounded], unbounded) == [other, unbounded]
    assert add_or_update_toleration([other], unbounded) == [other, unbounded]
    assert add_or_update_toleration(None, unbounded) == [unbounded]
    same = [unbounded, other]
    assert add_or_update_toleration(same, unbounded) == same
    # Another operator or value is another toleration.
    equal = Toleration(key="k", operator="Equal", value="x", effect=NO_EXECUTE)
    assert add_or_update_toleration([equal], unbounded) == [equal, unbounded]


def test_taint_text_is_kubectl_spelling() -> None:
    assert taint_text(Taint(key="k", value="v", effect=NO_SCHEDULE)) == "k=v:NoSchedule"
    assert taint_text(Taint(key="k", effect=NO_EXECUTE)) == "k:NoExecute"


# -- node affinity ---------------------------------------------------------------------------


def _node(name: str = "n1", **labels: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=labels))


def _expr(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=operator, values=list(values))


def _term(
    *exprs: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()
) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=list(exprs) or None, match_fields=list(fields) or None
    )


@pytest.mark.parametrize(
    ("expr", "labels", "matches"),
    [
        (_expr("disk", "In", "ssd", "nvme"), {"disk": "ssd"}, True),
        (_expr("disk", "In", "ssd"), {"disk": "hdd"}, False),
        (_expr("disk", "In", "ssd"), {}, False),
        (_expr("disk", "NotIn", "hdd"), {}, True),
        (_expr("disk", "NotIn", "hdd"), {"disk": "hdd"}, False),
        (_expr("disk", "Exists"), {"disk": ""}, True),
        (_expr("disk", "DoesNotExist"), {"disk": "x"}, False),
        (_expr("cores", "Gt", "4"), {"cores": "8"}, True),
        (_expr("cores", "Gt", "4"), {"cores": "4"}, False),
        (_expr("cores", "Lt", "4"), {"cores": "2"}, True),
        (_expr("cores", "Gt", "4"), {"cores": "many"}, False),
        # Terms kube's parser refuses match nothing.
        (_expr("cores", "Gt", "four"), {"cores": "8"}, False),
        (_expr("cores", "Gt", "1", "2"), {"cores": "8"}, False),
        (_expr("disk", "In"), {"disk": "ssd"}, False),
        (_expr("disk", "Exists", "x"), {"disk": "ssd"}, False),
        (_expr("disk", "Near", "ssd"), {"disk": "ssd"}, False),
        (_expr("bad key!", "Exists"), {"bad key!": "x"}, False),
    ],
)
def test_match_expressions(
    expr: NodeSelectorRequirement, labels: dict[str, str], matches: bool
) -> None:
    assert node_selector_term_matches(_term(expr), _node(**labels)) is matches


def test_match_fields_select_the_node_name() -> None:
    pin = _expr("metadata.name", "In", "n1")
    assert node_selector_term_matches(_term(fields=(pin,)), _node("n1"))
    assert not node_selector_term_matches(_term(fields=(pin,)), _node("n2"))
    avoid = _expr("metadata.name", "NotIn", "n1")
    assert node_selector_term_matches(_term(fields=(avoid,)), _node("n2"))
    # Only one value, only In/NotIn; another field is never set on a node.
    assert not node_selector_term_matches(
        _term(fields=(_expr("metadata.name", "In", "n1", "n2"),)), _node("n1")
    )
    assert not node_selector_term_matches(
        _term(fields=(_expr("metadata.name", "Exists"),)), _node("n1")
    )
    assert not node_selector_term_matches(
        _term(fields=(_expr("spec.unschedulable", "In", "n1"),)), _node("n1")
    )
    # Expressions and fields of one term are ANDed.
    both = _term(_expr("disk", "In", "ssd"), fields=(pin,))
    assert node_selector_term_matches(both, _node("n1", disk="ssd"))
    assert not node_selector_term_matches(both, _node("n1", disk="hdd"))


def test_terms_are_ored_and_empty_ones_match_nothing() -> None:
    ssd = _term(_expr("disk", "In", "ssd"))
    broken = _term(_expr("cores", "Gt", "x"))
    selector = NodeSelector(node_selector_terms=[NodeSelectorTerm(), broken, ssd])
    assert node_selector_matches(selector, _node(disk="ssd"))
    assert not node_selector_matches(selector, _node(disk="hdd"))
    assert not node_selector_matches(NodeSelector(node_selector_terms=[]), _node())
    assert not node_selector_matches(
        NodeSelector(node_selector_terms=[NodeSelectorTerm()]), _node()
    )


def test_required_node_affinity_needs_node_selector_and_affinity() -> None:
    affinity = Affinity(
        node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=[_term(fields=(_expr("metadata.name", "In", "n1"),))]
            )
        )
    )
    spec = PodSpec(node_selector={"zone": "a"}, affinity=affinity)
    assert required_node_affinity_matches(spec, _node("n1", zone="a"))
    assert not required_node_affinity_matches(spec, _node("n2", zone="a"))
    assert not required_node_affinity_matches(spec, _node("n1", zone="b"))
    assert required_node_affinity_matches(PodSpec(), _node())
    assert required_node_affinity_matches(None, _node())
    # Only preferred terms: no requirement.
    preferred = Affinity(node_affinity=NodeAffinity())
    assert required_node_affinity_matches(PodSpec(affinity=preferred), _node())


# -- the template hash -----------------------------------------------------------------------


def _template(image: str, **labels: str) -> PodTemplateSpec:
    return PodTemplateSpec(
        metadata=ObjectMeta(labels=labels or {"app": "web"}),
        spec=PodSpec(containers=[Container(name="c", image=image)]),
    )


def test_template_hash_is_stable_and_changes_with_template_and_collisions() -> None:
    first = compute_template_hash(_template("nginx:1"), None)
    assert first == compute_template_hash(_template("nginx:1"), None)
    assert first != compute_template_hash(_template("nginx:2"), None)
    assert first != compute_template_hash(_template("nginx:1"), 0)
    assert compute_template_hash(_template("nginx:1"), 0) != compute_template_hash(
        _template("nginx:1"), 1
    )
    # Nil and empty are the same template (as read back from a server).
    empty_env = PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": "web"}, annotations={}),
        spec=PodSpec(containers=[Container(name="c", image="nginx:1", env=[])]),
    )
    assert compute_template_hash(empty_env, None) == first
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_prune_empty_reads_frozen_json() -> None:
    from kcm.models import FrozenDict

    frozen = FrozenDict({"a": {"b": None, "c": []}, "d": [{"e": {}}], "f": "x"})
    assert prune_empty(frozen) == {"d": [{}], "f": "x"}
    assert prune_empty("text") == "text"
