"""Name rules, ObjectMeta and per-kind validation with kube-apiserver's messages and Status."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from kcm.apiserver._field_errors import duplicate, invalid, invalid_status, not_supported, required
from kcm.apiserver._names import GENERATE_NAME_ALPHABET, generate_name
from kcm.apiserver._validation import (
    name_errors,
    validate_create,
    validate_object,
    validate_object_meta,
    validate_update,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def _pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec or {"containers": [{"name": "c", "image": "nginx"}]},
    }


def test_bad_pod_name_status_exactly_as_kube_apiserver() -> None:
    causes = validate_object(_pod("Bad_Name"), group="", kind="Pod", namespaced=True)
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": f'Invalid value: "Bad_Name": {SUBDOMAIN_MSG}',
            "field": "metadata.name",
        }
    ]
    status = invalid_status(causes, kind="Pod", name="Bad_Name")
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        + SUBDOMAIN_MSG,
        "reason": "Invalid",
        "details": {"name": "Bad_Name", "kind": "Pod", "causes": causes},
        "code": 422,
    }


@pytest.mark.parametrize(
    ("group", "kind", "name", "messages"),
    [
        ("", "Pod", "ok-name.x", []),
        ("", "Pod", "a" * 254, ["must be no more than 253 characters"]),
        ("", "ConfigMap", "UPPER", [SUBDOMAIN_MSG]),
        ("", "Namespace", "a.b", [LABEL_MSG]),
        ("", "Namespace", "a" * 64, ["must be no more than 63 characters"]),
        ("", "Service", "1abc", [DNS1035_MSG]),
        ("", "Service", "abc", []),
        ("example.com", "Widget", "w.1", []),
        ("example.com", "Widget", "W", [SUBDOMAIN_MSG]),
        ("rbac.authorization.k8s.io", "ClusterRole", "system:controller:x", []),
        ("rbac.authorization.k8s.io", "Role", "..", ["may not be '..'"]),
        (
            "rbac.authorization.k8s.io",
            "Role",
            "a/b%c",
            ["may not contain '/'", "may not contain '%'"],
        ),
        ("batch", "CronJob", "c" * 53, ["must be no more than 52 characters"]),
    ],
)
def test_name_rules(group: str, kind: str, name: str, messages: list[str]) -> None:
    assert name_errors(name, group, kind) == messages


def test_generate_name() -> None:
    rng = random.Random(7)
    name = generate_name("web-", rng)
    assert name.startswith("web-")
    assert len(name) == 9
    assert set(name[4:]) <= set(GENERATE_NAME_ALPHABET)
    long = generate_name("x" * 80, random.Random(1))
    assert len(long) == 63
    assert long.startswith("x" * 58)
    assert generate_name("a-", random.Random(3)) == generate_name("a-", random.Random(3))
    assert name_errors("web-", "", "Pod", prefix=True) == []
    assert name_errors("web-", "", "Pod") == [SUBDOMAIN_MSG]


def test_object_meta_rules() -> None:
    def meta(**m: Any) -> list[dict[str, str]]:
        return validate_object_meta({"metadata": m}, group="", kind="ConfigMap", namespaced=True)

    assert meta(name="a", namespace="ns") == []
    assert meta(namespace="ns") == [required("metadata.name", "name or generateName is required")]
    assert meta(name="a") == [required("metadata.namespace")]
    assert meta(name="a", namespace="Bad") == [invalid("metadata.namespace", "Bad", LABEL_MSG)]
    assert validate_object_meta(
        {"metadata": {"name": "n", "namespace": "x"}}, group="", kind="Node", namespaced=False
    ) == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: not allowed on this type",
            "field": "metadata.namespace",
        }
    ]
    bad_labels = meta(name="a", namespace="ns", labels={"ok": "-bad", "bad key": "v"})
    assert [c["field"] for c in bad_labels] == ["metadata.labels", "metadata.labels"]
    assert bad_labels[0]["message"].startswith('Invalid value: "bad key": name part must consist')
    assert bad_labels[1]["message"].startswith('Invalid value: "-bad": a valid label must be')
    bad_ann = meta(name="a", namespace="ns", annotations={"a/b/c": "x"})
    assert bad_ann[0]["field"] == "metadata.annotations"
    assert bad_ann[0]["message"].startswith('Invalid value: "a/b/c": a qualified name must')
    assert meta(name="a", namespace="ns", annotations={"Upper.Case/Key": "x"}) == []
    big = meta(name="a", namespace="ns", annotations={"k": "x" * (256 * 1024)})
    assert big == [
        {
            "reason": "FieldValueTooLong",
            "message": "Too long: must have at most 262144 bytes",
            "field": "metadata.annotations",
        }
    ]
    fin = meta(name="a", namespace="ns", finalizers=["example.com/ok", "bad finalizer", "plain"])
    assert [c["field"] for c in fin] == [
        "metadata.finalizers",  # not a qualified name (the path has no index, as kube's)
        "metadata.finalizers[1]",  # neither standard nor qualified
        "metadata.finalizers[2]",
    ]
    assert fin[2]["message"] == (
        'Invalid value: "plain": name is neither a standard finalizer name nor is it fully '
        "qualified"
    )
    assert meta(name="a", namespace="ns", finalizers=["kubernetes", "orphan"]) == []


def test_pod_required_fields() -> None:
    assert validate_object(_pod(), group="", kind="Pod", namespaced=True) == []
    causes = validate_object(
        _pod(
            containers=[
                {"name": "c"},
                {"image": "x"},
                {"name": "c", "image": "y"},
                {"name": "C", "image": "z"},
            ]
        ),
        group="",
        kind="Pod",
        namespaced=True,
    )
    assert causes == [
        required("spec.containers[0].image"),
        required("spec.containers[1].name"),
        duplicate("spec.containers[2].name", "c"),
        invalid("spec.containers[3].name", "C", LABEL_MSG),
    ]
    no_containers = validate_object(
        _pod(restartPolicy="Sometimes"), group="", kind="Pod", namespaced=True
    )
    assert no_containers == [
        required("spec.containers"),
        not_supported("spec.restartPolicy", "Sometimes", ["Always", "OnFailure", "Never"]),
    ]
    status = invalid_status(no_containers, kind="Pod", name="p")
    assert status["message"] == (
        'Pod "p" is invalid: [spec.containers: Required value, spec.restartPolicy: Unsupported '
        'value: "Sometimes": supported values: "Always", "OnFailure", "Never"]'
    )


def _deployment(selector: Any, labels: Any, **template_spec: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": labels} if labels is not None else {},
            "spec": template_spec or {"containers": [{"name": "c", "image": "nginx"}]},
        }
    }
    if selector is not None:
        spec["selector"] = selector
    return {"metadata": {"name": "d", "namespace": "default"}, "spec": spec}


def test_deployment_selector_rules() -> None:
    ok = _deployment({"matchLabels": {"app": "web"}}, {"app": "web", "x": "y"})
    assert validate_object(ok, group="apps", kind="Deployment", namespaced=True) == []

    missing = validate_object(
        _deployment(None, {"app": "web"}), group="apps", kind="Deployment", namespaced=True
    )
    status = invalid_status(missing, group="apps", kind="Deployment", name="d")
    assert status["message"] == (
        'Deployment.apps "d" is invalid: [spec.selector: Required value, '
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`]"
    )
    assert status["details"]["group"] == "apps"

    empty = validate_object(
        _deployment({}, {"app": "web"}), group="apps", kind="Deployment", namespaced=True
    )
    assert empty == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid "
            "for deployment",
            "field": "spec.selector",
        }
    ]

    mismatch = validate_object(
        _deployment({"matchLabels": {"app": "web"}}, {"app": "db"}),
        group="apps",
        kind="Deployment",
        namespaced=True,
    )
    assert [c["field"] for c in mismatch] == ["spec.template.metadata.labels"]

    never = validate_object(
        _deployment(
            {"matchLabels": {"a": "b"}},
            {"a": "b"},
            containers=[{"name": "c", "image": "i"}],
            restartPolicy="Never",
        ),
        group="apps",
        kind="Deployment",
        namespaced=True,
    )
    assert never == [not_supported("spec.template.spec.restartPolicy", "Never", ["Always"])]

    no_containers = validate_object(
        _deployment({"matchLabels": {"a": "b"}}, {"a": "b"}, hostNetwork=True),
        group="apps",
        kind="DaemonSet",
        namespaced=True,
    )
    assert no_containers == [required("spec.template.spec.containers")]

    negative = _deployment({"matchLabels": {"a": "b"}}, {"a": "b"})
    negative["spec"]["replicas"] = -1
    assert validate_object(negative, group="apps", kind="ReplicaSet", namespaced=True) == [
        invalid("spec.replicas", -1, "must be greater than or equal to 0")
    ]


def test_resource_adapters_and_update_immutability() -> None:
    res = SimpleNamespace(group="apps", kind="Deployment", namespaced=True)
    old = _deployment({"matchLabels": {"app": "web"}}, {"app": "web", "v": "2"})
    assert validate_create(old, res) == []
    old["metadata"]["resourceVersion"] = "7"  # as stored; an update carries it too
    new = _deployment({"matchLabels": {"app": "web", "v": "2"}}, {"app": "web", "v": "2"})
    new["metadata"]["resourceVersion"] = "7"
    causes = validate_update(old, new, res)
    assert [c["field"] for c in causes] == ["spec.selector"]
    assert causes[0]["message"].endswith(": field is immutable")
    assert validate_update(old, old, res) == []


def _meta(name: str = "x") -> dict[str, Any]:
    return {"name": name, "namespace": "default"}


def test_config_map_and_secret_keys() -> None:
    ok = {"metadata": _meta(), "data": {"a.b": "1", "KEY_2": "x", "k-3": "y"}}
    assert validate_object(ok, group="", kind="ConfigMap", namespaced=True) == []
    bad = {
        "metadata": _meta(),
        "data": {"bad key": "1", "..x": "2"},
        "binaryData": {"a.b": "", "..x": ""},
    }
    causes = validate_object(bad, group="", kind="ConfigMap", namespaced=True)
    assert [c["field"] for c in causes] == [
        "data[..x]",
        "data[..x]",  # in both: reported on data, as kube-apiserver does
        "data[bad key]",
        "binaryData[..x]",
    ]
    assert causes[0]["message"] == "Invalid value: \"..x\": must not start with '..'"
    assert causes[2]["message"] == (
        'Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '
        "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
        "validation is '[-._a-zA-Z0-9]+')"
    )
    assert causes[1]["message"] == 'Invalid value: "..x": duplicate of key present in binaryData'
    secret = {"metadata": _meta(), "stringData": {"a/b": "x"}}  # merged into data first
    assert [
        c["field"] for c in validate_object(secret, group="", kind="Secret", namespaced=True)
    ] == ["data[a/b]"]


def test_service_ports() -> None:
    def svc(**spec: Any) -> list[dict[str, str]]:
        return validate_object(
            {"metadata": _meta("s"), "spec": spec}, group="", kind="Service", namespaced=True
        )

    assert svc(ports=[{"port": 80}]) == []
    assert svc() == [required("spec.ports")]
    assert svc(clusterIP="None", clusterIPs=["None"]) == []  # as stored: both set
    assert svc(type="ExternalName", externalName="x.example.com") == []
    causes = svc(
        ports=[
            {"port": 80, "name": "http"},
            {"port": 0, "name": "http"},
            {"port": 81, "protocol": "ICMP"},
        ]
    )
    assert causes == [
        duplicate("spec.ports[1].name", "http"),
        invalid("spec.ports[1].port", 0, "must be between 1 and 65535, inclusive"),
        invalid("spec.ports[1].targetPort", 0, "must be between 1 and 65535, inclusive"),
        required("spec.ports[2].name"),
        not_supported("spec.ports[2].protocol", "ICMP", ["SCTP", "TCP", "UDP"]),
    ]


def test_job_and_cronjob_restart_policy() -> None:
    template = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    job = {"metadata": _meta("j"), "spec": {"template": template}}
    causes = validate_object(job, group="batch", kind="Job", namespaced=True)
    assert causes == [
        not_supported("spec.template.spec.restartPolicy", "Always", ["OnFailure", "Never"])
    ]
    assert invalid_status(causes, group="batch", kind="Job", name="j")["message"] == (
        'Job.batch "j" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": '
        'supported values: "OnFailure", "Never"'
    )
    never = {"spec": {**template["spec"], "restartPolicy": "Never"}}
    assert (
        validate_object(
            {"metadata": _meta("j"), "spec": {"template": never}},
            group="batch",
            kind="Job",
            namespaced=True,
        )
        == []
    )
    cron = {"metadata": _meta("c"), "spec": {"jobTemplate": {"spec": {"template": never}}}}
    assert validate_object(cron, group="batch", kind="CronJob", namespaced=True) == [
        required("spec.schedule")
    ]
    cron["spec"]["schedule"] = "*/5 * * * *"
    assert validate_object(cron, group="batch", kind="CronJob", namespaced=True) == []
