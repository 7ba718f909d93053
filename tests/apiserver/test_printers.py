"""kube 1.24's printers, kind by kind: the Table cells the server computes (the conformance
scenarios ``kubectl/get-table-*`` cover a fresh object of the common kinds through kubectl)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kcm.apiserver._registry import Registry
from kcm.apiserver._table import to_table

NOW = datetime(2030, 1, 1, tzinfo=UTC)
REGISTRY = Registry()


def ago(seconds: int) -> str:
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def table(group: str, plural: str, obj: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """The column names (``*`` marks wide ones) and the one row's cells."""
    version = next(r.version for r in REGISTRY.all if (r.group, r.plural) == (group, plural))
    res = REGISTRY.lookup(group, version, plural)
    assert res is not None
    obj.setdefault("metadata", {}).setdefault("name", "x")
    obj["metadata"].setdefault("creationTimestamp", ago(30))
    out = to_table(res, {"metadata": {}, "items": [obj]}, "None", NOW)
    names = [c["name"] + ("*" if c["priority"] else "") for c in out["columnDefinitions"]]
    return names, out["rows"][0]["cells"]


def test_kinds_without_a_1_24_printer_get_name_and_created_at() -> None:
    names, cells = table("rbac.authorization.k8s.io", "roles", {})
    assert names == ["Name", "Created At"]
    assert cells == ["x", ago(30)]


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        (
            {"type": "NodePort", "clusterIPs": ["10.0.0.5"], "ports": [
                {"port": 80, "nodePort": 30080, "protocol": "TCP"},
                {"port": 53, "protocol": "UDP"},
            ]},
            {},
            ["NodePort", "10.0.0.5", "<none>", "80:30080/TCP,53/UDP"],
        ),
        (
            {"type": "LoadBalancer", "clusterIPs": ["10.0.0.6"], "externalIPs": ["1.1.1.1"]},
            {"loadBalancer": {"ingress": [{"ip": "2.2.2.2"}, {"hostname": "lb.example"}]}},
            ["LoadBalancer", "10.0.0.6", "2.2.2.2,lb.example,1.1.1.1", "<none>"],
        ),
        ({"type": "LoadBalancer"}, {}, ["LoadBalancer", "<none>", "<pending>", "<none>"]),
        (
            {"type": "ExternalName", "externalName": "db.example"},
            {},
            ["ExternalName", "<none>", "db.example", "<none>"],
        ),
    ],
)  # fmt: skip
def test_services(spec: dict[str, Any], status: dict[str, Any], expected: list[str]) -> None:
    names, cells = table("", "services", {"spec": spec, "status": status})
    assert names == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector*"]
    assert cells[1:5] == expected


def test_events_put_name_last_and_use_the_series() -> None:
    event = {
        "type": "Normal",
        "reason": "Pulled",
        "message": " pulled \n",
        "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{c}"},
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": ago(600),
        "lastTimestamp": ago(300),
        "count": 4,
    }
    names, cells = table("", "events", dict(event))
    assert names == [
        "Last Seen", "Type", "Reason", "Object", "Subobject*", "Source*", "Message",
        "First Seen*", "Count*", "Name*",
    ]  # fmt: skip
    assert cells == [
        "5m", "Normal", "Pulled", "pod/p", "spec.containers{c}", "kubelet, node-1", "pulled",
        "10m", 4, "x",
    ]  # fmt: skip
    series = {**event, "series": {"count": 9, "lastObservedTime": ago(5)}}
    assert table("", "events", series)[1][0::8] == ["5s", 9]


def test_events_k8s_io_events_print_as_core_events() -> None:
    event = {
        "eventTime": ago(60),
        "type": "Warning",
        "reason": "Failed",
        "note": "boom",
        "regarding": {"kind": "Node"},
        "reportingController": "ctl",
    }
    _, cells = table("events.k8s.io", "events", event)
    assert cells == ["60s", "Warning", "Failed", "node", "", "ctl", "boom", "60s", 1, "x"]


def test_persistent_volume_claims_show_capacity_once_bound() -> None:
    pvc = {
        "metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}},
        "spec": {"volumeName": "pv-1", "storageClassName": "fast", "volumeMode": "Block"},
        "status": {"phase": "Bound", "capacity": {"storage": "5Gi"}, "accessModes": [
            "ReadWriteMany", "ReadWriteOnce"]},
    }  # fmt: skip
    _, cells = table("", "persistentvolumeclaims", pvc)
    assert cells == ["x", "Bound", "pv-1", "5Gi", "RWO,RWX", "slow", "30s", "Block"]


def test_resource_quotas_split_requests_and_limits() -> None:
    quota = {
        "status": {
            "hard": {"pods": "10", "limits.cpu": "4", "requests.memory": "1Gi"},
            "used": {"pods": "2"},
        }
    }
    _, cells = table("", "resourcequotas", quota)
    assert cells == ["x", "30s", "pods: 2/10, requests.memory: 0/1Gi", "limits.cpu: 0/4"]


def test_role_bindings_list_subjects_by_kind() -> None:
    binding = {
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
            {"kind": "Group", "name": "devs"},
            {"kind": "User", "name": "bob"},
        ],
    }
    names, cells = table("rbac.authorization.k8s.io", "rolebindings", binding)
    assert names == ["Name", "Role", "Age", "Users*", "Groups*", "ServiceAccounts*"]
    assert cells == ["x", "ClusterRole/view", "30s", "alice, bob", "devs", "ns/sa"]


@pytest.mark.parametrize(
    ("hpa", "targets"),
    [
        ({"spec": {"targetCPUUtilizationPercentage": 50}}, "<unknown>/50%"),
        (
            {"spec": {"targetCPUUtilizationPercentage": 50},
             "status": {"currentCPUUtilizationPercentage": 20}},
            "20%/50%",
        ),
        ({"spec": {}}, "<none>"),
        (
            {"spec": {"metrics": [
                {"type": "Pods", "pods": {"target": {"averageValue": "1k"}}},
                {"type": "External", "external": {"target": {"averageValue": "30"}}},
                {"type": "Resource", "resource": {"target": {"averageValue": "100m"}}},
            ]}},
            "<unknown>/1k, <unknown>/30 (avg) + 1 more...",
        ),
    ],
)  # fmt: skip
def test_horizontal_pod_autoscalers(hpa: dict[str, Any], targets: str) -> None:
    hpa["spec"].update(scaleTargetRef={"kind": "Deployment", "name": "web"}, maxReplicas=3)
    _, cells = table("autoscaling", "horizontalpodautoscalers", hpa)
    assert cells == ["x", "Deployment/web", targets, "<unset>", 3, 0, "30s"]


def test_pod_disruption_budgets() -> None:
    _, cells = table("policy", "poddisruptionbudgets", {"spec": {"maxUnavailable": "10%"}})
    assert cells == ["x", "N/A", "10%", 0, "30s"]


def test_ingresses_with_many_hosts_and_tls() -> None:
    rules = [{"host": f"h{i}.example"} for i in range(4)] + [{}]
    ingress = {"spec": {"rules": rules, "tls": [{"hosts": ["h0.example"]}]}}
    _, cells = table("networking.k8s.io", "ingresses", ingress)
    assert cells[1:5] == ["<none>", "h0.example,h1.example,h2.example + 2 more...", "", "80, 443"]


def test_default_storage_class_is_named_so() -> None:
    storage_class = {
        "metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "csi.example",
    }
    _, cells = table("storage.k8s.io", "storageclasses", storage_class)
    assert cells == ["x (default)", "csi.example", "Delete", "Immediate", False, "30s"]


def test_endpoints_show_three_addresses_then_more() -> None:
    subsets = [
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}]},
        {"addresses": [{"ip": "fd00::1"}, {"ip": "10.0.0.4"}], "ports": [{"port": 8080}]},
    ]
    _, cells = table("", "endpoints", {"subsets": subsets})
    assert cells[1] == "10.0.0.1:80,10.0.0.2:80,[fd00::1]:8080 + 1 more..."


def test_controller_revisions_name_their_controller() -> None:
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}
    revision = {"metadata": {"ownerReferences": [owner]}, "revision": 3}
    assert table("apps", "controllerrevisions", revision)[1] == [
        "x",
        "statefulset.apps/db",
        3,
        "30s",
    ]


def test_cron_jobs_and_jobs_have_1_24_columns() -> None:
    names, cells = table("batch", "cronjobs", {"spec": {"schedule": "@daily", "suspend": True}})
    assert names[:6] == ["Name", "Schedule", "Suspend", "Active", "Last Schedule", "Age"]
    assert cells[:6] == ["x", "@daily", "True", 0, "<none>", "30s"]
    names, cells = table(
        "batch", "jobs", {"spec": {"completions": 3}, "status": {"startTime": ago(90)}}
    )
    assert names[:4] == ["Name", "Completions", "Duration", "Age"]
    assert cells[:4] == ["x", "0/3", "90s", "30s"]
