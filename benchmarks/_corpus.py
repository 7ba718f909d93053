"""A shared corpus of realistic objects for the decode and informer benchmarks.

``make_pod(i)`` is a ~4 KB pod as kube-apiserver returns it for a Deployment's replica:
managedFields (with fieldsV1), labels, annotations, an ownerReference, two containers with env,
ports, resources and probes, volumes, and a status with conditions and containerStatuses.
Deterministic: the same ``i`` always gives the same pod.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["make_pod", "pod_list_bytes", "pod_list_dict"]


def _ts(i: int, offset: int = 0) -> str:
    seconds = (i * 7 + offset) % 86400
    return f"2024-05-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def make_pod(i: int, *, namespace: str = "default") -> dict[str, Any]:
    """A realistic pod as a JSON-compatible dict (about 4 KB when encoded)."""
    app = f"web-{i % 50}"
    rs_hash = f"{(i * 2654435761) % 0xFFFFFFFFFF:010x}"[:10]
    name = f"{app}-{rs_hash}-{i:05d}"
    uid = f"{i:08x}-1b2c-4d3e-8f40-{(i * 7919) % 0xFFFFFFFFFFFF:012x}"
    created = _ts(i)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{app}-{rs_hash}-",
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": str(100000 + i),
            "creationTimestamp": created,
            "labels": {
                "app": app,
                "pod-template-hash": rs_hash,
                "tier": "frontend",
                "app.kubernetes.io/part-of": "shop",
            },
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2024-04-30T12:00:00Z",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-{rs_hash}",
                    "uid": f"rs-{i % 50:04d}-5a6b-4c7d-9e8f-0a1b2c3d4e5f",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": created,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:generateName": {},
                            "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                            "f:ownerReferences": {".": {}, f'k:{{"uid":"rs-{i % 50:04d}"}}': {}},
                        },
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"app"}': {
                                    ".": {},
                                    "f:env": {".": {}, 'k:{"name":"MODE"}': {".": {}}},
                                    "f:image": {},
                                    "f:ports": {".": {}},
                                    "f:resources": {".": {}, "f:limits": {}, "f:requests": {}},
                                }
                            },
                            "f:dnsPolicy": {},
                            "f:restartPolicy": {},
                        },
                    },
                },
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": _ts(i, 12),
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:status": {
                            "f:conditions": {'k:{"type":"Ready"}': {".": {}, "f:status": {}}},
                            "f:containerStatuses": {},
                            "f:podIP": {},
                        }
                    },
                    "subresource": "status",
                },
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": f"registry.example/shop/{app}:1.{i % 10}.3",
                    "imagePullPolicy": "IfNotPresent",
                    "args": ["--port=8080", "--log-level=info"],
                    "ports": [
                        {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
                    ],
                    "env": [
                        {"name": "MODE", "value": "production"},
                        {
                            "name": "POD_NAME",
                            "valueFrom": {
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}
                            },
                        },
                        {
                            "name": "DB_PASSWORD",
                            "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}},
                        },
                    ],
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "256Mi"},
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                    },
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                        "initialDelaySeconds": 10,
                        "periodSeconds": 10,
                        "timeoutSeconds": 1,
                        "successThreshold": 1,
                        "failureThreshold": 3,
                    },
                    "readinessProbe": {
                        "tcpSocket": {"port": 8080},
                        "periodSeconds": 5,
                        "timeoutSeconds": 1,
                        "successThreshold": 1,
                        "failureThreshold": 3,
                    },
                    "volumeMounts": [
                        {"name": "config", "mountPath": "/etc/app", "readOnly": True},
                        {
                            "name": "kube-api-access",
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                            "readOnly": True,
                        },
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                },
                {
                    "name": "sidecar",
                    "image": "registry.example/infra/proxy:2.4.1",
                    "imagePullPolicy": "IfNotPresent",
                    "ports": [{"name": "proxy", "containerPort": 15001, "protocol": "TCP"}],
                    "env": [{"name": "UPSTREAM", "value": "127.0.0.1:8080"}],
                    "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                },
            ],
            "volumes": [
                {"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
                {
                    "name": "kube-api-access",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "name": "kube-root-ca.crt",
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                }
                            },
                        ],
                    },
                },
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": f"node-{i % 100:03d}",
            "securityContext": {"runAsNonRoot": True, "fsGroup": 2000},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": _ts(i, k)}
                for k, t in enumerate(
                    ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"]
                )
            ]
            + [{"type": "PodScheduled", "status": "True", "lastTransitionTime": created}],
            "hostIP": f"10.0.{i % 100}.1",
            "podIP": f"10.244.{i // 250 % 250}.{i % 250}",
            "podIPs": [{"ip": f"10.244.{i // 250 % 250}.{i % 250}"}],
            "startTime": created,
            "qosClass": "Burstable",
            "containerStatuses": [
                {
                    "name": c,
                    "state": {"running": {"startedAt": _ts(i, 5)}},
                    "ready": True,
                    "restartCount": i % 3,
                    "image": f"registry.example/{c}:1.{i % 10}.3",
                    "imageID": f"registry.example/{c}@sha256:{(i * 31337) % 10**16:064d}",
                    "containerID": f"containerd://{(i * 7 + n) % 10**16:064x}",
                    "started": True,
                }
                for n, c in enumerate(["app", "sidecar"])
            ],
        },
    }


def pod_list_dict(n: int, *, namespace: str = "default") -> dict[str, Any]:
    """A PodList of ``n`` pods as a dict."""
    return {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": str(100000 + n)},
        "items": [make_pod(i, namespace=namespace) for i in range(n)],
    }


def pod_list_bytes(n: int, *, namespace: str = "default") -> bytes:
    """A PodList of ``n`` pods as compact JSON bytes (what a list request returns)."""
    return json.dumps(pod_list_dict(n, namespace=namespace), separators=(",", ":")).encode()
