"""Field selector support per kind, as kube-apiserver's field label conversion functions."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver._fields import (
    FieldSelectorNotSupported,
    field_getter,
    field_matcher,
    field_value,
    supported_fields,
    unsupported_field_message,
    validate_field_selector,
)
from kcm.selectors import FieldSelector

POD: dict[str, Any] = {
    "metadata": {"name": "p1", "namespace": "ns"},
    "spec": {
        "nodeName": "n1",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "sa",
        "hostNetwork": True,
    },
    "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}], "nominatedNodeName": "n2"},
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("metadata.name", "p1"),
        ("metadata.namespace", "ns"),
        ("spec.nodeName", "n1"),
        ("spec.restartPolicy", "Always"),
        ("spec.schedulerName", "default-scheduler"),
        ("spec.serviceAccountName", "sa"),
        ("spec.hostNetwork", "true"),
        ("status.phase", "Running"),
        ("status.podIP", "10.0.0.5"),
        ("status.nominatedNodeName", "n2"),
    ],
)
def test_pod_fields(field: str, value: str) -> None:
    assert field_value(POD, "", "Pod", field) == value
    assert field in supported_fields("", "Pod")


def test_defaults_for_unset_fields() -> None:
    bare: dict[str, Any] = {"metadata": {"name": "p"}}
    assert field_value(bare, "", "Pod", "spec.nodeName") == ""
    assert field_value(bare, "", "Pod", "spec.hostNetwork") == "false"
    assert field_value(bare, "", "Pod", "status.podIP") == ""
    assert field_value({"status": {"podIP": "1.2.3.4"}}, "", "Pod", "status.podIP") == "1.2.3.4"
    assert field_value(bare, "", "Node", "spec.unschedulable") == "false"
    assert (
        field_value({"spec": {"unschedulable": True}}, "", "Node", "spec.unschedulable") == "true"
    )
    assert field_value(bare, "apps", "ReplicaSet", "status.replicas") == "0"
    assert field_value({"status": {"replicas": 3}}, "apps", "ReplicaSet", "status.replicas") == "3"
    assert field_value({"status": {"succeeded": 2}}, "batch", "Job", "status.successful") == "2"
    assert field_value(bare, "batch", "Job", "status.successful") == "0"
    assert field_value(bare, "apps", "StatefulSet", "status.successful") is None
    assert field_value(bare, "", "Pod", "spec.bogus") is None


@pytest.mark.parametrize(
    ("group", "kind", "fields"),
    [
        ("", "Node", {"metadata.name", "spec.unschedulable"}),
        ("", "Namespace", {"metadata.name", "status.phase"}),
        ("", "Secret", {"metadata.name", "metadata.namespace", "type"}),
        ("", "ConfigMap", {"metadata.name", "metadata.namespace"}),
        ("apps", "Deployment", {"metadata.name", "metadata.namespace"}),
        ("apps", "ReplicaSet", {"metadata.name", "metadata.namespace", "status.replicas"}),
        ("", "ReplicationController", {"metadata.name", "metadata.namespace", "status.replicas"}),
        ("batch", "Job", {"metadata.name", "metadata.namespace", "status.successful"}),
        ("example.com", "Widget", {"metadata.name", "metadata.namespace"}),
        (
            "",
            "Event",
            {
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            },
        ),
    ],
)
def test_supported_fields(group: str, kind: str, fields: set[str]) -> None:
    assert supported_fields(group, kind) == frozenset(fields)


def test_event_fields() -> None:
    event = {
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "name": "p1", "uid": "u1", "fieldPath": "spec"},
        "reason": "Killing",
        "source": {"component": "kubelet"},
        "reportingComponent": "kubelet",
        "type": "Normal",
    }
    get = field_getter(event, "", "Event")
    assert FieldSelector.parse(
        "involvedObject.kind=Pod,involvedObject.name=p1,reason=Killing,source=kubelet,type=Normal"
    ).matches(get)
    assert not FieldSelector.parse("involvedObject.uid=u2").matches(get)
    assert FieldSelector.parse("involvedObject.namespace=").matches(get)
    v1 = {"regarding": {"kind": "Pod"}, "reportingController": "k", "metadata": {"name": "e"}}
    assert field_value(v1, "events.k8s.io", "Event", "regarding.kind") == "Pod"
    assert field_value(v1, "events.k8s.io", "Event", "reportingController") == "k"


def test_selector_over_pods() -> None:
    pods = [
        {"metadata": {"name": f"p{i}"}, "spec": {"nodeName": f"n{i % 2}"}, "status": {"phase": ph}}
        for i, ph in enumerate(["Running", "Pending", "Running", "Succeeded"])
    ]
    sel = FieldSelector.parse("spec.nodeName=n0,status.phase!=Succeeded")
    chosen = [p["metadata"]["name"] for p in pods if sel.matches(field_getter(p, "", "Pod"))]
    assert chosen == ["p0", "p2"]
    match = field_matcher(sel, "", "Pod")
    assert [p["metadata"]["name"] for p in pods if match(p)] == ["p0", "p2"]
    assert field_matcher(FieldSelector.parse("spec.nodeName="), "", "Pod")({"spec": {}})
    with pytest.raises(FieldSelectorNotSupported):
        field_matcher(FieldSelector.parse("spec.bogus=1"), "", "Pod")


def test_unsupported_field_errors() -> None:
    assert unsupported_field_message("spec.foo") == "field label not supported: spec.foo"
    validate_field_selector(FieldSelector.parse("spec.nodeName=x"), "", "Pod")
    with pytest.raises(FieldSelectorNotSupported) as info:
        validate_field_selector(FieldSelector.parse("metadata.name=a,spec.foo=x"), "", "Pod")
    assert str(info.value) == "field label not supported: spec.foo"
    assert info.value.field == "spec.foo"
    status = info.value.to_status()
    assert status["code"] == 400
    assert status["reason"] == "BadRequest"
    assert status["message"] == "field label not supported: spec.foo"
    with pytest.raises(FieldSelectorNotSupported):
        validate_field_selector(FieldSelector.parse("metadata.namespace=x"), "", "Namespace")
    with pytest.raises(FieldSelectorNotSupported):
        validate_field_selector(FieldSelector.parse("spec.color=red"), "example.com", "Widget")


def test_crd_selectable_fields() -> None:
    widget = {"metadata": {"name": "w"}, "spec": {"color": "red", "size": 3}}
    extra = [".spec.color", ".spec.size"]
    assert "spec.color" in supported_fields("example.com", "Widget", extra=extra)
    validate_field_selector(
        FieldSelector.parse("spec.color=red"), "example.com", "Widget", extra=extra
    )
    assert field_value(widget, "example.com", "Widget", "spec.size", extra=extra) == "3"
    assert FieldSelector.parse("spec.color=red,spec.size=3").matches(
        field_getter(widget, "example.com", "Widget", extra=extra)
    )


def test_kind_only_call_forms() -> None:
    assert supported_fields("Pod") == supported_fields("", "Pod")
    assert supported_fields("Job") == supported_fields("batch", "Job")
    assert "involvedObject.kind" in supported_fields("Event")
    assert field_value(POD, "Pod", "spec.nodeName") == "n1"
    assert field_value({"status": {"replicas": 2}}, "ReplicaSet", "status.replicas") == "2"
