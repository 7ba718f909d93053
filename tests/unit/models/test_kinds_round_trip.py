"""One realistic object of each kind the issue names: decode, encode, and compare with the
official client's view of the same JSON."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import kubernetes.client as k8s
import pytest

from kcm.models import decode, encode, model_for, to_dict

META = {"name": "x", "namespace": "ns", "uid": "u-1", "resourceVersion": "5"}
CLUSTER_META = {"name": "x", "uid": "u-1", "resourceVersion": "5"}
T = "2024-05-01T10:00:00Z"
MT = "2024-05-01T10:00:00.123456Z"

SAMPLES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "v1",
        "Node",
        {
            "metadata": CLUSTER_META,
            "spec": {
                "podCIDR": "10.244.1.0/24",
                "providerID": "fake://n1",
                "taints": [{"key": "k", "effect": "NoSchedule"}],
            },
            "status": {
                "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                "allocatable": {"cpu": "3800m", "memory": "15Gi"},
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastHeartbeatTime": T,
                        "lastTransitionTime": T,
                        "reason": "KubeletReady",
                    }
                ],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                "nodeInfo": {
                    "kubeletVersion": "v1.32.0",
                    "architecture": "amd64",
                    "bootID": "b",
                    "containerRuntimeVersion": "containerd://1.7",
                    "kernelVersion": "6.1",
                    "kubeProxyVersion": "",
                    "machineID": "m",
                    "operatingSystem": "linux",
                    "osImage": "Debian",
                    "systemUUID": "s",
                },
            },
        },
    ),
    (
        "v1",
        "Endpoints",
        {
            "metadata": META,
            "subsets": [
                {
                    "addresses": [{"ip": "10.244.0.5", "targetRef": {"kind": "Pod", "name": "p"}}],
                    "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
                }
            ],
        },
    ),
    (
        "v1",
        "Namespace",
        {
            "metadata": CLUSTER_META,
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        },
    ),
    (
        "v1",
        "ServiceAccount",
        {"metadata": META, "secrets": [{"name": "s"}], "automountServiceAccountToken": False},
    ),
    (
        "v1",
        "Secret",
        {"metadata": META, "type": "Opaque", "data": {"k": "dmFsdWU="}, "immutable": True},
    ),
    (
        "v1",
        "Event",
        {
            "metadata": META,
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Scheduled",
            "message": "ok",
            "type": "Normal",
            "count": 2,
            "firstTimestamp": T,
            "lastTimestamp": T,
            "eventTime": MT,
            "source": {"component": "scheduler"},
            "reportingComponent": "scheduler",
            "series": {"count": 2, "lastObservedTime": MT},
        },
    ),
    (
        "v1",
        "ResourceQuota",
        {
            "metadata": META,
            "spec": {"hard": {"pods": "10"}},
            "status": {"hard": {"pods": "10"}, "used": {"pods": "3"}},
        },
    ),
    (
        "v1",
        "LimitRange",
        {
            "metadata": META,
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "500m"},
                        "defaultRequest": {"cpu": "100m"},
                    }
                ]
            },
        },
    ),
    (
        "v1",
        "PersistentVolume",
        {
            "metadata": CLUSTER_META,
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete",
                "hostPath": {"path": "/data"},
                "claimRef": {"namespace": "ns", "name": "c"},
            },
            "status": {"phase": "Bound"},
        },
    ),
    (
        "v1",
        "PersistentVolumeClaim",
        {
            "metadata": META,
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "standard",
                "volumeName": "pv-1",
            },
            "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}},
        },
    ),
    (
        "v1",
        "ReplicationController",
        {
            "metadata": META,
            "spec": {
                "replicas": 2,
                "selector": {"app": "a"},
                "template": {
                    "metadata": {"labels": {"app": "a"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
            "status": {"replicas": 2, "readyReplicas": 1},
        },
    ),
    (
        "apps/v1",
        "ReplicaSet",
        {
            "metadata": dict(
                META,
                ownerReferences=[
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "d",
                        "uid": "u",
                        "controller": True,
                    }
                ],
            ),
            "spec": {
                "replicas": 1,
                "selector": {
                    "matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]
                },
                "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            },
            "status": {"replicas": 1, "availableReplicas": 1},
        },
    ),
    (
        "apps/v1",
        "StatefulSet",
        {
            "metadata": META,
            "spec": {
                "serviceName": "s",
                "replicas": 3,
                "selector": {"matchLabels": {"a": "b"}},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"partition": 1, "maxUnavailable": "50%"},
                },
                "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                "volumeClaimTemplates": [
                    {
                        "kind": "PersistentVolumeClaim",  # nested kinds keep their tag
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            },
        },
    ),
    (
        "apps/v1",
        "DaemonSet",
        {
            "metadata": META,
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            },
            "status": {
                "desiredNumberScheduled": 3,
                "numberReady": 3,
                "currentNumberScheduled": 3,
                "numberMisscheduled": 0,
            },
        },
    ),
    (
        "apps/v1",
        "ControllerRevision",
        {"metadata": META, "revision": 3, "data": {"spec": {"template": {"$patch": "replace"}}}},
    ),
    (
        "batch/v1",
        "Job",
        {
            "metadata": META,
            "spec": {
                "completions": 3,
                "parallelism": 2,
                "backoffLimit": 4,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
                },
            },
            "status": {
                "succeeded": 1,
                "active": 2,
                "startTime": T,
                "conditions": [{"type": "Complete", "status": "False"}],
            },
        },
    ),
    (
        "batch/v1",
        "CronJob",
        {
            "metadata": META,
            "spec": {
                "schedule": "*/5 * * * *",
                "timeZone": "Etc/UTC",
                "concurrencyPolicy": "Forbid",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "OnFailure",
                                "containers": [{"name": "c", "image": "i"}],
                            }
                        }
                    }
                },
            },
            "status": {"lastScheduleTime": T, "active": [{"kind": "Job", "name": "j"}]},
        },
    ),
    (
        "coordination.k8s.io/v1",
        "Lease",
        {
            "metadata": META,
            "spec": {
                "holderIdentity": "me",
                "leaseDurationSeconds": 15,
                "acquireTime": MT,
                "renewTime": MT,
                "leaseTransitions": 2,
            },
        },
    ),
    (
        "discovery.k8s.io/v1",
        "EndpointSlice",
        {
            "metadata": dict(META, labels={"kubernetes.io/service-name": "web"}),
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": ["10.244.0.5"],
                    "conditions": {"ready": True},
                    "nodeName": "n1",
                    "targetRef": {"kind": "Pod", "name": "p"},
                }
            ],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        },
    ),
    (
        "policy/v1",
        "PodDisruptionBudget",
        {
            "metadata": META,
            "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"a": "b"}}},
            "status": {
                "currentHealthy": 2,
                "desiredHealthy": 1,
                "expectedPods": 3,
                "disruptionsAllowed": 1,
            },
        },
    ),
    (
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        {
            "metadata": META,
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 80},
                        },
                    }
                ],
            },
            "status": {"currentReplicas": 2, "desiredReplicas": 3},
        },
    ),
    (
        "events.k8s.io/v1",
        "Event",
        {
            "metadata": META,
            "eventTime": MT,
            "reportingController": "kcm",
            "reportingInstance": "i",
            "action": "Scale",
            "reason": "Scaled",
            "regarding": {"kind": "Deployment", "name": "d"},
            "note": "scaled",
            "type": "Normal",
            "series": {"count": 3, "lastObservedTime": MT},
        },
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "Role",
        {
            "metadata": META,
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        },
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        {
            "metadata": CLUSTER_META,
            "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]},
        },
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        {
            "metadata": META,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "ns"}],
        },
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        {
            "metadata": CLUSTER_META,
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "r",
            },
            "subjects": [
                {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}
            ],
        },
    ),
]


def _official_type(api_version: str, kind: str) -> str:
    if kind == "Event":
        return "CoreV1Event" if api_version == "v1" else "EventsV1Event"
    version = api_version.rsplit("/", 1)[-1]
    return version[0].upper() + version[1:] + kind


def _normalize(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, str) and value[4:5] == "-" and value[10:11] == "T":
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value


@pytest.mark.parametrize(
    ("api_version", "kind", "body"), SAMPLES, ids=[f"{a}/{k}" for a, k, _ in SAMPLES]
)
def test_round_trip(api_version: str, kind: str, body: dict[str, Any]) -> None:
    data = {"apiVersion": api_version, "kind": kind, **body}
    model = model_for(api_version, kind)
    obj = decode(model, json.dumps(data))
    assert json.loads(encode(obj)) == data
    assert to_dict(obj) == data
    client = k8s.ApiClient()
    official = client.deserialize(json.dumps(data), _official_type(api_version, kind), None)
    assert _normalize(client.sanitize_for_serialization(official)) == _normalize(data)
