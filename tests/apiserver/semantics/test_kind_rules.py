"""Per-kind defaults and rules as kube-apiserver's strategies have them: Services (allocation,
IP families, what an update keeps), Secrets and ConfigMaps, workloads (defaults, the status Go
always writes, the DaemonSet template generation), Deployment strategies, Leases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._rest import Rest
from kcm.apiserver._status import StatusError


def _template() -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


@pytest.fixture
def rest() -> Rest:
    return ApiServer().rest


def _create(rest: Rest, plural: str, body: dict[str, Any], group: str = "") -> Any:
    res = rest.registry.lookup(group, "v1", plural)
    assert res is not None
    return rest.create(res, "default", body, {})


def _patch(rest: Rest, plural: str, name: str, patch: Any, group: str = "") -> Any:
    res = rest.registry.lookup(group, "v1", plural)
    assert res is not None
    raw = json.dumps(patch).encode()
    return rest.patch(res, "default", name, raw, "application/merge-patch+json", {})[1]


def _refused(call: Any) -> str:
    with pytest.raises(StatusError) as caught:
        call()
    assert caught.value.code == 422, caught.value.message
    return caught.value.message


def _service(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"ports": [{"port": 80}], **spec}}


def test_services_allocate_and_keep_their_addresses(rest: Rest) -> None:
    a = _create(rest, "services", _service("a", type="NodePort"))["spec"]
    assert (a["ipFamilies"], a["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert a["clusterIPs"] == [a["clusterIP"]]
    assert a["ports"][0]["nodePort"] in range(30000, 32768)
    b = _create(rest, "services", _service("b", type="NodePort"))["spec"]
    assert b["clusterIP"] != a["clusterIP"]
    assert b["ports"][0]["nodePort"] != a["ports"][0]["nodePort"]
    taken = {"type": "NodePort", "ports": [{"port": 80, "nodePort": a["ports"][0]["nodePort"]}]}
    assert _refused(lambda: _create(rest, "services", _service("c", **taken))).endswith(
        "provided port is already allocated"
    )
    outside = _service("d", clusterIP="10.96.0.1")
    assert _refused(lambda: _create(rest, "services", outside)).endswith(
        "failed to allocate IP 10.96.0.1: the provided IP (10.96.0.1) is not in the valid range. "
        "The range of valid IPs is 10.0.0.0/24"
    )
    same = _service("e", clusterIP=a["clusterIP"])
    assert _refused(lambda: _create(rest, "services", same)).endswith(
        f"failed to allocate IP {a['clusterIP']}: provided IP is already allocated"
    )
    headless = _create(rest, "services", {"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}})
    assert headless["spec"]["ipFamilyPolicy"] == "RequireDualStack"  # no selector
    assert headless["spec"]["ipFamilies"] == ["IPv4", "IPv6"]
    # a PUT that leaves the allocated values out keeps them
    res = rest.registry.lookup("", "v1", "services")
    assert res is not None
    put = rest.update(res, "default", "a", _service("a", type="NodePort"), {})["spec"]
    assert (put["clusterIP"], put["ports"][0]["nodePort"]) == (
        a["clusterIP"],
        a["ports"][0]["nodePort"],
    )


def test_secret_types_and_immutability(rest: Rest) -> None:
    tls = {"metadata": {"name": "t"}, "type": "kubernetes.io/tls", "data": {}}
    assert _refused(lambda: _create(rest, "secrets", tls)).endswith(
        "[data[tls.crt]: Required value, data[tls.key]: Required value]"
    )
    body = {"metadata": {"name": "s"}, "stringData": {"k": "v"}, "immutable": True}
    created = _create(rest, "secrets", body)
    assert (created["data"], created["type"], "stringData" in created) == (
        {"k": "dg=="},
        "Opaque",
        False,
    )
    message = _refused(lambda: _patch(rest, "secrets", "s", {"data": {"k": "dw=="}}))
    assert message.endswith("data: Forbidden: field is immutable when `immutable` is set")


def test_workload_defaults_and_the_status_go_writes(rest: Rest) -> None:
    def body() -> dict[str, Any]:
        selector = {"matchLabels": {"app": "x"}}
        return {"metadata": {"name": "w"}, "spec": {"selector": selector, "template": _template()}}

    rs = _create(rest, "replicasets", body(), group="apps")
    assert rs["status"] == {"replicas": 0}
    assert rs["spec"]["template"]["metadata"]["creationTimestamp"] is None
    ds = _create(rest, "daemonsets", body(), group="apps")
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    annotation = "deprecated.daemonset.template.generation"
    assert ds["metadata"]["annotations"][annotation] == "1"
    relabelled = {"spec": {"template": {"metadata": {"labels": {"app": "x", "v": "2"}}}}}
    assert (
        _patch(rest, "daemonsets", "w", relabelled, "apps")["metadata"]["annotations"][annotation]
        == "2"
    )
    rc = _create(
        rest,
        "replicationcontrollers",
        {"metadata": {"name": "rc"}, "spec": {"template": _template()}},
    )
    assert (rc["spec"]["selector"], rc["metadata"]["labels"]) == ({"app": "x"}, {"app": "x"})


def test_deployment_strategy_and_lease_rules(rest: Rest) -> None:
    def deployment(strategy: Any) -> dict[str, Any]:
        spec = {
            "selector": {"matchLabels": {"app": "x"}},
            "template": _template(),
            "strategy": strategy,
        }
        return {"metadata": {"name": "d"}, "spec": spec}

    both_zero = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}
    assert _refused(lambda: _create(rest, "deployments", deployment(both_zero), "apps")).endswith(
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, "
        'IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0'
    )
    unknown = {"type": "Sometimes"}
    assert "spec.strategy: Unsupported value" in _refused(
        lambda: _create(rest, "deployments", deployment(unknown), "apps")
    )
    lease = {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}}
    assert _refused(lambda: _create(rest, "leases", lease, "coordination.k8s.io")).endswith(
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"
    )


def test_status_writes_take_metadata_but_not_the_spec(rest: Rest) -> None:
    """Built-in status strategies reset only the spec (Deployments: labels too), and a
    ``/status`` write never bumps ``metadata.generation``."""

    def body() -> dict[str, Any]:
        return {
            "metadata": {"name": "d", "labels": {"app": "x"}},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _template()},
        }

    created = _create(rest, "deployments", body(), group="apps")
    res = rest.registry.lookup("apps", "v1", "deployments")
    assert res is not None
    sent = json.loads(json.dumps(created))
    sent["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "1"}
    sent["metadata"]["labels"] = {"app": "y"}
    sent["spec"]["replicas"] = 5
    sent["status"] = {"observedGeneration": 1}
    written = rest.update(res, "default", "d", sent, {}, subresource="status")
    assert written["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "1"}
    assert written["metadata"]["labels"] == {"app": "x"}
    assert written["spec"]["replicas"] == 1
    assert written["status"]["observedGeneration"] == 1
    assert written["metadata"]["generation"] == 1
    rs = _create(rest, "replicasets", body(), group="apps")
    rs_res = rest.registry.lookup("apps", "v1", "replicasets")
    assert rs_res is not None
    rs["metadata"]["labels"] = {"app": "y"}
    rs["metadata"]["finalizers"] = ["example.com/hold"]
    rs_written = rest.update(rs_res, "default", "d", rs, {}, subresource="status")
    assert rs_written["metadata"]["labels"] == {"app": "y"}
    assert rs_written["metadata"]["finalizers"] == ["example.com/hold"]


def test_zero_omitempty_status_counts_are_not_stored(rest: Rest) -> None:
    """Go leaves a status's zero ``omitempty`` integers out; the non-omitempty ones stay."""
    body = {
        "metadata": {"name": "r", "labels": {"app": "x"}},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _template()},
    }
    created = _create(rest, "replicasets", body, group="apps")
    res = rest.registry.lookup("apps", "v1", "replicasets")
    assert res is not None
    created["status"] = {"replicas": 0, "availableReplicas": 0, "readyReplicas": 2}
    written = rest.update(res, "default", "r", created, {}, subresource="status")
    assert written["status"] == {"replicas": 0, "readyReplicas": 2}


def test_created_objects_record_only_what_the_client_sent_and_its_defaults(rest: Rest) -> None:
    """The field manager sees the decoded object (scheme defaults included), not what
    admission and PrepareForCreate add afterwards."""
    res = rest.registry.lookup("", "v1", "namespaces")
    assert res is not None
    ns = rest.create(res, None, {"metadata": {"name": "team"}, "spec": {}}, {}, manager="m")
    [entry] = ns["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}
    }
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    svc_res = rest.registry.lookup("", "v1", "services")
    assert svc_res is not None
    svc = rest.create(svc_res, "default", _service("s"), {}, manager="m")
    [entry] = svc["metadata"]["managedFields"]
    assert "f:clusterIP" not in entry["fieldsV1"]["f:spec"]
    assert "f:sessionAffinity" in entry["fieldsV1"]["f:spec"]  # a scheme default


def test_empty_endpoint_slice_lists_read_back_null(rest: Rest) -> None:
    """kube-apiserver stores EndpointSlices as protobuf: ``endpoints: []`` (what the Go
    controllers write for an empty slice) and a missing ``ports`` read back as ``null``."""
    body = {"metadata": {"name": "s"}, "addressType": "IPv4", "endpoints": []}
    created = _create(rest, "endpointslices", body, group="discovery.k8s.io")
    assert created["endpoints"] is None
    assert created["ports"] is None
    port = {"name": "http", "port": 80, "protocol": "TCP"}
    patched = _patch(rest, "endpointslices", "s", {"ports": [port]}, group="discovery.k8s.io")
    assert patched["ports"] == [port]
    assert patched["endpoints"] is None


def test_a_merge_patch_of_paused_false_leaves_no_paused(rest: Rest) -> None:
    """``spec.paused`` is a plain ``bool`` with ``omitempty``: Go writes no ``false``."""
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "paused": True,
            "selector": {"matchLabels": {"app": "x"}},
            "template": _template(),
        },
    }
    assert _create(rest, "deployments", body, group="apps")["spec"]["paused"] is True
    resumed = _patch(rest, "deployments", "d", {"spec": {"paused": False}}, group="apps")
    assert "paused" not in resumed["spec"]


def test_a_job_without_labels_gets_its_templates_with_the_generated_ones(rest: Rest) -> None:
    """Go's defaulting shares the template's label map with a Job that has none, so the
    selector labels generated afterwards show on the Job too (as on kube-apiserver)."""
    template = {**_template(), "spec": {**_template()["spec"], "restartPolicy": "Never"}}
    job = _create(
        rest, "jobs", {"metadata": {"name": "j"}, "spec": {"template": template}}, "batch"
    )
    uid = job["metadata"]["uid"]
    assert job["metadata"]["labels"] == {
        "app": "x",
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid,
        "job-name": "j",
    }
    own = {"metadata": {"name": "k", "labels": {"team": "a"}}, "spec": {"template": template}}
    assert _create(rest, "jobs", own, "batch")["metadata"]["labels"] == {"team": "a"}
