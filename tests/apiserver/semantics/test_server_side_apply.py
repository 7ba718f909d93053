"""Server-side apply ownership, conflicts and managedFields, mirroring kubectl --server-side."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcm.apiserver._apply import (
    _MISSING,
    ApplyConflict,
    _compare,
    _merge_ordered,
    _owned,
    apply_ssa,
    field_set,
    fields_to_paths,
    path_string,
    paths_to_fields,
    track_update,
)
from kcm.apiserver._field_types import builtin_type, schema_type


def deployment(replicas: int = 1, image: str = "nginx:1", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": labels or {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]},
            },
        },
    }


def apply(
    live: Any, obj: Any, manager: str = "kubectl", force: bool = False, now: str = "T"
) -> Any:
    before_live, before_obj = copy.deepcopy(live), copy.deepcopy(obj)
    out = apply_ssa(
        live, obj, manager=manager, force=force, group="apps", kind="Deployment", now=now
    )
    assert live == before_live, "live was mutated"
    assert obj == before_obj, "the applied config was mutated"
    return out


def managers(obj: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"].get("managedFields", [])}


def test_create_by_apply_records_fieldsv1() -> None:
    live = apply(None, deployment())
    assert live["spec"]["replicas"] == 1
    (entry,) = live["metadata"]["managedFields"]
    assert entry["manager"] == "kubectl"
    assert entry["operation"] == "Apply"
    assert entry["apiVersion"] == "apps/v1"
    assert entry["time"] == "T"
    assert entry["fieldsType"] == "FieldsV1"
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},  # a LabelSelector is atomic
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {'k:{"name":"nginx"}': {".": {}, "f:image": {}, "f:name": {}}}
                },
            },
        },
    }


def test_reapply_same_config_is_idempotent() -> None:
    live = apply(None, deployment())
    again = apply(live, deployment(), now="T2")
    assert {k: v for k, v in again.items() if k != "metadata"} == {
        k: v for k, v in live.items() if k != "metadata"
    }
    assert len(again["metadata"]["managedFields"]) == 1


def test_conflict_with_update_manager_message_and_causes() -> None:
    live = apply(None, deployment())
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    live = track_update(live, scaled, manager="kubectl-client-side-apply", now="T2")
    with pytest.raises(ApplyConflict) as info:
        apply(live, deployment(replicas=3))
    err = info.value
    assert str(err) == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: '
        ".spec.replicas"
    )
    assert err.causes == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
            "field": ".spec.replicas",
        }
    ]
    status = err.to_status(name="web", group="apps", kind="deployments")
    assert status["code"] == 409
    assert status["reason"] == "Conflict"
    assert status["details"]["causes"] == err.causes


def test_same_value_is_shared_not_a_conflict() -> None:
    live = apply(None, deployment(replicas=2))
    live = apply(live, deployment(replicas=2), manager="other")
    assert set(managers(live)) == {("kubectl", "Apply"), ("other", "Apply")}
    assert "f:replicas" in managers(live)[("other", "Apply")]["fieldsV1"]["f:spec"]
    assert "f:replicas" in managers(live)[("kubectl", "Apply")]["fieldsV1"]["f:spec"]


def test_conflict_between_two_appliers_and_force() -> None:
    live = apply(None, deployment(replicas=2))
    with pytest.raises(ApplyConflict) as info:
        apply(live, deployment(replicas=4, image="nginx:2"), manager="ci")
    assert str(info.value) == (
        'Apply failed with 2 conflicts: conflicts with "kubectl":\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="nginx"].image'
    )
    forced = apply(live, deployment(replicas=4, image="nginx:2"), manager="ci", force=True)
    assert forced["spec"]["replicas"] == 4
    owners = managers(forced)
    assert "f:replicas" not in owners[("kubectl", "Apply")]["fieldsV1"]["f:spec"]
    assert "f:replicas" in owners[("ci", "Apply")]["fieldsV1"]["f:spec"]
    # kubectl applying its old config now conflicts with ci
    with pytest.raises(ApplyConflict, match='conflicts with "ci"'):
        apply(forced, deployment(replicas=2))


def test_omitted_fields_are_removed_unless_owned_elsewhere() -> None:
    live = apply(None, deployment(app="web", tier="fe"))
    trimmed = deployment(app="web")
    out = apply(live, trimmed)
    assert out["metadata"]["labels"] == {"app": "web"}
    # if another manager also owns the label, it stays
    shared = apply(live, deployment(app="web", tier="fe"), manager="other")
    out = apply(shared, trimmed)
    assert out["metadata"]["labels"] == {"app": "web", "tier": "fe"}
    # removing the last label prunes the empty map
    no_labels = deployment()
    del no_labels["metadata"]["labels"]
    out = apply(apply(None, deployment()), no_labels)
    assert "labels" not in out["metadata"]


def test_list_items_merge_by_key_and_removal_of_items() -> None:
    two = deployment()
    two["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    live = apply(None, two)
    # another manager adds a field inside the nginx container: kept after kubectl reapplies
    edited = copy.deepcopy(live)
    edited["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Always"
    live = track_update(live, edited, manager="editor", now="T2")
    out = apply(live, deployment())
    containers = out["spec"]["template"]["spec"]["containers"]
    assert containers == [{"name": "nginx", "image": "nginx:1", "imagePullPolicy": "Always"}]


def test_apply_keeps_fields_it_does_not_mention() -> None:
    live = apply(None, deployment())
    status = copy.deepcopy(live)
    status["status"] = {"replicas": 1, "conditions": [{"type": "Available", "status": "True"}]}
    live = track_update(live, status, manager="controller", now="T2")
    out = apply(live, deployment(image="nginx:2"))
    assert out["status"] == status["status"]
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"


def test_track_update_transfers_and_drops_ownership() -> None:
    created = track_update(None, deployment(), manager="kubectl-create", now="T1")
    (entry,) = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["time"]) == (
        "kubectl-create",
        "Update",
        "T1",
    )
    assert "f:name" not in entry["fieldsV1"]["f:metadata"]
    changed = copy.deepcopy(created)
    changed["spec"]["replicas"] = 3
    del changed["metadata"]["labels"]
    before_created, before_changed = copy.deepcopy(created), copy.deepcopy(changed)
    updated = track_update(created, changed, manager="kubectl-edit", now="T2")
    assert created == before_created
    assert changed == before_changed
    owners = managers(updated)
    assert owners[("kubectl-edit", "Update")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    create_fields = owners[("kubectl-create", "Update")]["fieldsV1"]
    assert "f:replicas" not in create_fields["f:spec"]
    assert "f:metadata" not in create_fields
    assert owners[("kubectl-create", "Update")]["time"] == "T1"
    # an update that changes nothing leaves managedFields alone
    same = track_update(updated, copy.deepcopy(updated), manager="noop", now="T3")
    assert same["metadata"]["managedFields"] == updated["metadata"]["managedFields"]


def test_track_update_reset_with_empty_entry() -> None:
    created = track_update(None, deployment(), manager="a", now="T1")
    reset = copy.deepcopy(created)
    reset["metadata"]["managedFields"] = [{}]
    out = track_update(created, reset, manager="b", now="T2")
    assert "managedFields" not in out["metadata"]
    kept = copy.deepcopy(created)
    kept["metadata"]["managedFields"] = []
    assert (
        track_update(created, kept, manager="b", now="T2")["metadata"]["managedFields"]
        == (created["metadata"]["managedFields"])
    )


def test_ports_keyed_by_port_and_protocol_and_sets() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "finalizers": ["a/b"]},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]},
    }
    paths = field_set(pod, group="", kind="Pod")
    assert ("f:metadata", "f:finalizers", 'v:"a/b"') in paths
    item = ("f:spec", "f:containers", 'k:{"name":"c"}')
    assert item in paths
    assert (*item, "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}') in paths
    assert path_string((*item, "f:image")) == '.spec.containers[name="c"].image'
    assert path_string(("f:metadata", "f:finalizers", 'v:"a/b"')) == '.metadata.finalizers[="a/b"]'
    assert (
        path_string((*item, "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'))
        == '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]'
    )


def test_custom_resources_lists_are_atomic() -> None:
    widget: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"items": [{"name": "a"}], "size": 1},
    }
    live = apply_ssa(
        None, widget, manager="m", force=False, group="example.com", kind="Widget", now="T"
    )
    entry = live["metadata"]["managedFields"][0]
    assert entry["fieldsV1"] == {"f:spec": {"f:items": {}, "f:size": {}}}
    changed = copy.deepcopy(widget)
    changed["spec"]["items"] = [{"name": "b"}]
    out = apply_ssa(
        live, changed, manager="m", force=False, group="example.com", kind="Widget", now="T"
    )
    assert out["spec"]["items"] == [{"name": "b"}]


_element = st.one_of(
    st.sampled_from(["f:a", "f:b", "f:c"]),
    st.builds(lambda n: f'k:{{"name":"{n}"}}', st.sampled_from(["x", "y"])),
    st.builds(lambda v: f'v:"{v}"', st.sampled_from(["p", "q"])),
)


@settings(max_examples=200)
@given(st.sets(st.lists(_element, min_size=1, max_size=4).map(tuple), max_size=6))
def test_fieldsv1_round_trip(paths: set[tuple[str, ...]]) -> None:
    assert fields_to_paths(paths_to_fields(paths)) == paths


@settings(max_examples=100)
@given(st.integers(0, 9), st.sampled_from(["a", "b"]), st.booleans())
def test_apply_then_reapply_is_stable(replicas: int, image: str, extra_label: bool) -> None:
    labels = {"app": "web", "x": "1"} if extra_label else {"app": "web"}
    first = apply(None, deployment(replicas, image, **labels))
    second = apply(first, deployment(replicas, image, **labels))
    assert second == first


def test_subresource_entries_and_conflict_text() -> None:
    live = apply(None, deployment())
    with_status = copy.deepcopy(live)
    with_status["status"] = {"replicas": 1}
    live = track_update(live, with_status, manager="ctrl", now="T2", subresource="status")
    entry = managers(live)[("ctrl", "Update")]
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}
    applied = deployment()
    applied["status"] = {"replicas": 7}
    with pytest.raises(ApplyConflict) as info:
        apply(live, applied)
    assert str(info.value) == (
        'Apply failed with 1 conflict: conflict with "ctrl" using apps/v1 with subresource '
        '"status": .status.replicas'
    )


@settings(max_examples=300)
@given(
    st.lists(st.sampled_from("abcdef"), unique=True, max_size=6),
    st.lists(st.sampled_from("abcdef"), unique=True, max_size=6),
)
def test_list_merge_order_properties(live: list[str], applied: list[str]) -> None:
    out = _merge_ordered(live, applied, str, lambda lhs, rhs: rhs)
    assert sorted(out) == sorted(set(live) | set(applied))
    assert [x for x in out if x in applied] == applied  # applied order wins
    live_only = [x for x in live if x not in applied]
    assert [x for x in out if x in live_only] == live_only  # live-only items keep their order
    if not applied:
        assert out == live


_env: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {"name": st.sampled_from("EF"), "value": st.sampled_from("12")}
)
_pod_container: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {"name": st.sampled_from("xyz")},
    optional={
        "image": st.sampled_from(["i1", "i2"]),
        "args": st.lists(st.sampled_from("ab"), max_size=2),
        "env": st.lists(_env, max_size=2, unique_by=lambda e: str(e["name"])),
    },
)
_pod_objects = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {"name": st.just("p")},
            optional={
                "labels": st.dictionaries(
                    st.sampled_from("abc"), st.sampled_from(["1", "2"]), min_size=1, max_size=3
                ),
                "finalizers": st.lists(st.sampled_from(["x/a", "x/b"]), unique=True, max_size=2),
                "resourceVersion": st.sampled_from(["1", "2"]),
            },
        ),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "containers": st.lists(
                    _pod_container,
                    max_size=3,
                    unique_by=lambda c: str(c["name"]),
                ),
                "nodeName": st.sampled_from(["n1", "n2"]),
                "hostNetwork": st.booleans(),
                "nodeSelector": st.dictionaries(
                    st.sampled_from("ab"), st.sampled_from("12"), max_size=2
                ),
            },
        ),
    }
)


@settings(max_examples=300)
@given(_pod_objects, _pod_objects)
def test_compare_agrees_with_a_full_leaf_diff(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Skipping equal subtrees loses nothing: a leaf (or list item) is changed or removed
    exactly when it differs (maps and lists an update adds or removes come on top)."""
    pod = builtin_type("", "v1", "Pod")

    def leaves(obj: dict[str, Any]) -> dict[Any, Any]:  # empty maps and lists aside
        return {p: v for p, v in _owned(obj, pod).items() if v not in ({}, [])}

    old_leaves, new_leaves = leaves(old), leaves(new)
    changed, removed = _compare(old, new, pod)
    for p in old_leaves.keys() | new_leaves.keys():
        differs = old_leaves.get(p, _MISSING) != new_leaves.get(p, _MISSING)
        assert differs == (p in changed | removed), p
    assert _compare(old, old, pod) == (set(), set())


def _fields(obj: Any, manager: str) -> Any:
    (entry,) = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return entry["fieldsV1"]


def test_an_update_owns_the_maps_and_items_it_adds() -> None:
    """An Update entry has ``.`` for each map, list and item the write added, except what the
    kind's Go zero value already has (spec.template, its metadata and spec, containers); an
    added struct brings its own zero members (a container's resources)."""
    created = track_update(None, deployment(), manager="creator", now="T1")
    assert _fields(created, "creator") == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {  # a new container has its zero-value resources
                        'k:{"name":"nginx"}': {
                            ".": {},
                            "f:image": {},
                            "f:name": {},
                            "f:resources": {},
                        }
                    }
                },
            },
        },
    }
    changed = copy.deepcopy(created)
    changed["spec"]["template"]["metadata"]["labels"]["b"] = "2"
    changed["spec"]["template"]["spec"]["securityContext"] = {"runAsUser": 1}
    updated = track_update(created, changed, manager="editor", now="T2")
    assert _fields(updated, "editor") == {
        "f:spec": {
            "f:template": {
                "f:metadata": {"f:labels": {"f:b": {}}},
                "f:spec": {"f:securityContext": {".": {}, "f:runAsUser": {}}},
            }
        }
    }
    removed = copy.deepcopy(updated)
    del removed["spec"]["template"]["spec"]["securityContext"]
    out = track_update(updated, removed, manager="pruner", now="T3")
    assert [e["manager"] for e in out["metadata"]["managedFields"]] == ["creator", "editor"]
    assert _fields(out, "editor") == {
        "f:spec": {"f:template": {"f:metadata": {"f:labels": {"f:b": {}}}}}
    }


def test_custom_resource_updates_and_applies() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "m": {"type": "object", "additionalProperties": {"type": "object"}},
                    "s": {"type": "object", "properties": {"y": {"type": "integer"}}},
                    "items": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object"},
                    },
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            }
        },
    }
    ftype = schema_type(schema)
    widget: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"m": {"k": {"x": 1}}, "s": {"y": 1}, "items": [{"name": "a"}], "tags": ["t"]},
    }
    created = track_update(None, widget, manager="c", now="T", field_type=ftype)
    assert _fields(created, "c") == {
        "f:spec": {
            ".": {},
            "f:items": {".": {}, 'k:{"name":"a"}': {".": {}, "f:name": {}}},
            "f:m": {".": {}, "f:k": {".": {}, "f:x": {}}},
            "f:s": {".": {}, "f:y": {}},
            "f:tags": {},
        }
    }
    applied = apply_ssa(
        None,
        widget,
        manager="a",
        force=False,
        group="example.com",
        kind="Widget",
        now="T",
        field_type=ftype,
    )
    assert _fields(applied, "a") == {  # map entries that are not fields own themselves
        "f:spec": {
            "f:items": {'k:{"name":"a"}': {".": {}, "f:name": {}}},
            "f:m": {"f:k": {".": {}, "f:x": {}}},
            "f:s": {"f:y": {}},
            "f:tags": {},
        }
    }


def test_managed_fields_order() -> None:
    """Apply entries first, then by time, manager, apiVersion and subresource."""
    live = track_update(None, deployment(), manager="z-creator", now="2026-01-01T00:00:01Z")
    changed = copy.deepcopy(live)
    changed["spec"]["replicas"] = 2
    live = track_update(live, changed, manager="a-scaler", now="2026-01-01T00:00:01Z")
    live = apply(live, deployment(replicas=2, image="nginx:2"), manager="m", force=True)
    order = [(e["manager"], e["operation"]) for e in live["metadata"]["managedFields"]]
    assert order == [("m", "Apply"), ("a-scaler", "Update"), ("z-creator", "Update")]


def test_apply_drops_the_empty_maps_go_would_not_keep() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    live = apply_ssa(None, cm, manager="m", force=False, group="", kind="ConfigMap", now="T")
    out = apply_ssa(
        live, {**cm, "data": {}}, manager="m", force=False, group="", kind="ConfigMap", now="T"
    )
    assert "data" not in out
    assert _fields(out, "m") == {"f:data": {}}
    out = apply_ssa(
        out,
        {**cm, "data": {"b": "2"}},
        manager="m",
        force=False,
        group="",
        kind="ConfigMap",
        now="T",
    )
    assert out["data"] == {"b": "2"}


def test_kubectl_takes_over_what_it_last_applied_client_side() -> None:
    last = '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"c"}}\n'
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "c",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last},
        },
        "data": {"a": "1"},
    }
    live = track_update(None, cm, manager="kubectl-client-side-apply", now="T")
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"a": "2"},
    }
    with pytest.raises(ApplyConflict):
        apply_ssa(live, config, manager="other", force=False, group="", kind="ConfigMap", now="T")
    out = apply_ssa(
        live, config, manager="kubectl", force=False, group="", kind="ConfigMap", now="T"
    )
    assert out["data"] == {"a": "2"}
    assert out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == (
        '{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap","metadata":{"name":"c"}}\n'
    )
