"""Strategic merge patch of built-in kinds, as kube-apiserver's strategicpatch package."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcm.apiserver._patch import PatchError
from kcm.apiserver._strategic import (
    UNSUPPORTED_MEDIA_TYPE_MESSAGE,
    apply_strategic_merge_patch,
    field_info,
    root_type,
    supports_strategic,
)


def smp(doc: Any, patch: Any, group: str = "", kind: str = "Pod") -> Any:
    before_doc, before_patch = copy.deepcopy(doc), copy.deepcopy(patch)
    result = apply_strategic_merge_patch(doc, patch, group=group, kind=kind)
    assert doc == before_doc, "the document was mutated"
    assert patch == before_patch, "the patch was mutated"
    return result


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), **spec}}


def test_containers_merge_by_name_and_keep_untouched_fields() -> None:
    doc = pod(
        {"name": "a", "image": "a:1", "args": ["x"], "unknownField": {"k": 1}},
        {"name": "b", "image": "b:1", "env": [{"name": "E", "value": "1"}]},
    )
    out = smp(doc, {"spec": {"containers": [{"name": "b", "image": "b:2"}]}})
    assert out["spec"]["containers"] == [
        {"name": "a", "image": "a:1", "args": ["x"], "unknownField": {"k": 1}},
        {"name": "b", "image": "b:2", "env": [{"name": "E", "value": "1"}]},
    ]


def test_new_items_go_before_server_only_items_as_in_go() -> None:
    doc = pod({"name": "a", "image": "a"}, {"name": "b", "image": "b"})
    out = smp(doc, {"spec": {"containers": [{"name": "c", "image": "c"}]}})
    assert [c["name"] for c in out["spec"]["containers"]] == ["c", "a", "b"]
    # a patch naming an existing item after a new one keeps the server order around it
    out = smp(
        doc, {"spec": {"containers": [{"name": "b", "image": "b2"}, {"name": "c", "image": "c"}]}}
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "b", "c"]


def test_set_element_order_directive() -> None:
    doc = pod({"name": "a", "image": "a"}, {"name": "b", "image": "b"})
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "containers": [{"name": "c", "image": "c"}],
        }
    }
    out = smp(doc, patch)
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "b", "c"]
    reorder = {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}}
    assert [c["name"] for c in smp(doc, reorder)["spec"]["containers"]] == ["b", "a"]
    assert "$setElementOrder/containers" not in smp(doc, reorder)["spec"]
    with pytest.raises(PatchError):
        smp(
            doc,
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}],
                    "containers": [{"name": "z"}],
                }
            },
        )


def test_nested_lists_env_ports_volume_mounts() -> None:
    doc = pod(
        {
            "name": "a",
            "image": "a",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            "ports": [{"containerPort": 80, "name": "http"}],
            "volumeMounts": [{"mountPath": "/data", "name": "d"}],
        }
    )
    out = smp(
        doc,
        {
            "spec": {
                "containers": [
                    {
                        "name": "a",
                        "env": [{"name": "B", "value": "3"}],
                        "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}],
                        "volumeMounts": [{"mountPath": "/data", "readOnly": True}],
                    }
                ]
            }
        },
    )
    c = out["spec"]["containers"][0]
    assert c["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]
    assert c["ports"] == [
        {"containerPort": 80, "name": "http", "protocol": "TCP"},
        {"containerPort": 443},
    ]
    assert c["volumeMounts"] == [{"mountPath": "/data", "name": "d", "readOnly": True}]


def test_lists_without_strategy_are_replaced() -> None:
    doc = pod(
        {
            "name": "a",
            "image": "a",
            "args": ["1", "2"],
            "envFrom": [{"configMapRef": {"name": "x"}}],
        },
        tolerations=[{"key": "t1"}, {"key": "t2"}],
    )
    out = smp(
        doc,
        {"spec": {"tolerations": [{"key": "t3"}], "containers": [{"name": "a", "args": ["3"]}]}},
    )
    assert out["spec"]["tolerations"] == [{"key": "t3"}]
    assert out["spec"]["containers"][0]["args"] == ["3"]
    assert out["spec"]["containers"][0]["envFrom"] == [{"configMapRef": {"name": "x"}}]


def test_delete_directives() -> None:
    doc = pod({"name": "a", "image": "a"}, {"name": "b", "image": "b"})
    doc["metadata"]["finalizers"] = ["x/a", "x/b"]
    out = smp(
        doc,
        {
            "spec": {"containers": [{"name": "a", "$patch": "delete"}]},
            "metadata": {"$deleteFromPrimitiveList/finalizers": ["x/a", "x/zzz"]},
        },
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["b"]
    assert out["metadata"]["finalizers"] == ["x/b"]
    # a delete list for a missing field is ignored
    assert (
        "finalizers"
        not in smp({"metadata": {}}, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})[
            "metadata"
        ]
    )
    with pytest.raises(PatchError, match="does not contain declared merge key"):
        smp(doc, {"spec": {"containers": [{"$patch": "delete"}]}})
    with pytest.raises(PatchError, match="does not contain declared merge key"):
        smp(doc, {"spec": {"containers": [{"image": "x"}]}})


def test_replace_directives() -> None:
    doc = pod(
        {"name": "a", "image": "a"}, {"name": "b", "image": "b"}, nodeSelector={"a": "1", "b": "2"}
    )
    out = smp(doc, {"spec": {"containers": [{"name": "z", "image": "z"}, {"$patch": "replace"}]}})
    assert out["spec"]["containers"] == [{"name": "z", "image": "z"}]
    out = smp(doc, {"spec": {"nodeSelector": {"c": "3", "$patch": "replace"}}})
    assert out["spec"]["nodeSelector"] == {"c": "3"}
    out = smp(doc, {"spec": {"nodeSelector": {"$patch": "delete"}}})
    assert out["spec"]["nodeSelector"] == {}
    with pytest.raises(PatchError) as info:
        smp(doc, {"spec": {"nodeSelector": {"$patch": "bogus"}}})
    assert info.value.code == 400
    with pytest.raises(PatchError, match="merging lists cannot yet be specified"):
        smp(doc, {"spec": {"containers": [{"$patch": "merge"}]}})


def test_finalizers_set_merge_and_null_deletes() -> None:
    doc = {"metadata": {"name": "x", "finalizers": ["a", "b"], "labels": {"k": "v", "j": "w"}}}
    out = smp(
        doc,
        {"metadata": {"finalizers": ["b", "c"], "labels": {"k": None, "gone": None}}},
        kind="ConfigMap",
    )
    assert sorted(out["metadata"]["finalizers"]) == ["a", "b", "c"]
    assert len(out["metadata"]["finalizers"]) == 3
    assert out["metadata"]["labels"] == {"j": "w"}


def test_retain_keys_deployment_strategy() -> None:
    dep = {
        "metadata": {"name": "d"},
        "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
    }
    out = smp(
        dep,
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        "apps",
        "Deployment",
    )
    assert out["spec"]["strategy"] == {"type": "Recreate"}
    vol_pod = pod({"name": "a", "image": "a"}, volumes=[{"name": "v", "emptyDir": {}}])
    out = smp(
        vol_pod,
        {
            "spec": {
                "volumes": [
                    {"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}
                ]
            }
        },
    )
    assert out["spec"]["volumes"] == [{"name": "v", "hostPath": {"path": "/x"}}]


def test_conditions_owner_references_and_other_kinds() -> None:
    node = {
        "metadata": {"name": "n"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False"},
                {"type": "DiskPressure", "status": "False"},
            ],
            "addresses": [{"type": "InternalIP", "address": "1.1.1.1"}],
        },
    }
    out = smp(
        node,
        {
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "Hostname", "address": "n"}],
            }
        },
        kind="Node",
    )
    assert {c["type"]: c["status"] for c in out["status"]["conditions"]} == {
        "Ready": "True",
        "DiskPressure": "False",
    }
    assert len(out["status"]["addresses"]) == 2
    dep = {
        "metadata": {"name": "d", "ownerReferences": [{"uid": "1", "name": "a"}]},
        "status": {"conditions": [{"type": "Available", "status": "True"}]},
    }
    out = smp(
        dep,
        {
            "metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]},
            "status": {"conditions": [{"type": "Progressing", "status": "True"}]},
        },
        "apps",
        "Deployment",
    )
    assert {o["uid"] for o in out["metadata"]["ownerReferences"]} == {"1", "2"}
    assert {c["type"] for c in out["status"]["conditions"]} == {"Available", "Progressing"}
    svc = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": 8080}]}}
    out = smp(svc, {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}, kind="Service")
    assert out["spec"]["ports"] == [{"port": 80, "targetPort": 9090}]
    cj = {
        "metadata": {"name": "c"},
        "spec": {
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]
                        }
                    }
                }
            }
        },
    }
    out = smp(
        cj,
        {
            "spec": {
                "jobTemplate": {
                    "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "9"}]}}}
                }
            }
        },
        "batch",
        "CronJob",
    )
    assert out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"] == [
        {"name": "a", "image": "9"},
        {"name": "b", "image": "2"},
    ]
    # ConfigMaps have no lists to merge: data merges as a map
    cm = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    assert smp(cm, {"data": {"b": "2"}}, kind="ConfigMap")["data"] == {"a": "1", "b": "2"}


def test_new_values_are_cleaned_of_directives_and_nulls() -> None:
    doc = {"metadata": {"name": "p"}, "spec": {}}
    out = smp(
        doc,
        {
            "spec": {
                "containers": [
                    {"name": "a", "image": "a", "env": None},
                    {"name": "b", "$patch": "delete"},
                ],
                "nodeSelector": {"a": None, "b": "1"},
            }
        },
    )
    assert out["spec"] == {"containers": [{"name": "a", "image": "a"}], "nodeSelector": {"b": "1"}}


def test_custom_resources_are_refused_with_415() -> None:
    assert supports_strategic("", "Pod")
    assert supports_strategic("apps", "Deployment")
    assert supports_strategic("rbac.authorization.k8s.io", "Role")
    assert not supports_strategic("example.com", "Widget")
    assert not supports_strategic("gateway.networking.k8s.io", "Gateway")
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch({}, {}, group="example.com", kind="Widget")
    assert info.value.code == 415
    status = info.value.to_status()
    assert status["reason"] == "UnsupportedMediaType"
    assert status["message"] == UNSUPPORTED_MEDIA_TYPE_MESSAGE
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch({}, [1], group="", kind="Pod")
    assert info.value.code == 400


def test_table_lookups() -> None:
    assert root_type("", "Pod") == "Pod"
    assert root_type("", "ConfigMap") == "Object"
    assert root_type("example.com", "Widget") is None
    assert field_info("PodSpec", "containers").merge_key == "name"
    assert field_info("PodSpec", "tolerations").merges is False
    assert field_info("ObjectMeta", "finalizers").merges is True


_names = st.sampled_from(["a", "b", "c", "d", "e"])
_containers = st.lists(
    st.fixed_dictionaries(
        {"name": _names, "image": st.sampled_from(["x", "y"])},
        optional={"extra": st.integers(0, 3)},
    ),
    max_size=4,
    unique_by=lambda c: c["name"],
)


@settings(max_examples=200)
@given(_containers, _containers)
def test_untouched_containers_survive_unchanged(
    original: list[dict[str, Any]], patch: list[dict[str, Any]]
) -> None:
    out = smp(pod(*original), {"spec": {"containers": patch}})
    by_name = {c["name"]: c for c in out["spec"]["containers"]}
    patched = {c["name"] for c in patch}
    assert set(by_name) == {c["name"] for c in original} | patched
    for c in original:
        if c["name"] not in patched:
            assert by_name[c["name"]] == c
    for c in patch:
        for k, v in c.items():
            assert by_name[c["name"]][k] == v
    # server-only containers keep their relative order
    server_only = [c["name"] for c in out["spec"]["containers"] if c["name"] not in patched]
    assert server_only == [c["name"] for c in original if c["name"] not in patched]
