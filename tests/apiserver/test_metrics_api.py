"""metrics.k8s.io/v1beta1 from the pods' simulated usage: PodMetrics and NodeMetrics as
metrics-server serves them, so ``kubectl top pods/nodes`` works on the embedded server."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from kcm.apiserver._metrics import USAGE_ANNOTATION, container_usage
from kcm.models import format_quantity

SharedServer = Any

_NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
"""

_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: NAME
  namespace: default
  labels: {app: APP}
  annotations: ANNOTATIONS
spec:
  nodeName: n1
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: 500m, memory: 100Mi}}
  - name: side
    image: busybox
"""


def _pod(annotation: object | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p"}
    if annotation is not None:
        meta["annotations"] = {USAGE_ANNOTATION: json.dumps(annotation)}
    spec = {
        "containers": [
            {"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "100Mi"}}},
            {"name": "side"},
        ]
    }
    return {"metadata": meta, "spec": spec}


def _texts(pod: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (n, format_quantity(u["cpu"]), format_quantity(u["memory"], binary=True))
        for n, u in container_usage(pod)
    ]


def test_without_the_annotation_a_container_uses_a_tenth_of_its_requests() -> None:
    assert _texts(_pod(None)) == [("app", "50m", "10Mi"), ("side", "0", "0")]


def test_a_pod_wide_usage_is_split_evenly_over_the_containers() -> None:
    assert _texts(_pod({"cpu": "1", "memory": "64Mi"})) == [
        ("app", "500m", "32Mi"),
        ("side", "500m", "32Mi"),
    ]


def test_a_per_container_usage_names_containers_and_others_keep_the_default() -> None:
    texts = _texts(_pod({"side": {"cpu": "300m"}}))
    assert texts == [("app", "50m", "10Mi"), ("side", "300m", "0")]


@pytest.mark.parametrize("bad", ["{", '{"cpu": "lots"}', "[1]"])
def test_an_annotation_that_does_not_parse_falls_back_to_the_default(bad: str) -> None:
    pod = _pod(None)
    pod["metadata"]["annotations"] = {USAGE_ANNOTATION: bad}
    assert _texts(pod)[0] == ("app", "50m", "10Mi")


needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl")


def _kubectl(server: SharedServer, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(server.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _status(server: SharedServer, kind: str, name: str, status: dict[str, Any]) -> None:
    patch = json.dumps({"status": status})
    _kubectl(server, "patch", kind, name, "--subresource=status", "--type=merge", "-p", patch)


@pytest.fixture(scope="module")
def cluster(shared_server: SharedServer) -> SharedServer:
    _kubectl(shared_server, "create", "-f", "-", stdin=_NODE)
    ready = {"conditions": [{"type": "Ready", "status": "True"}]}
    _status(shared_server, "node", "n1", ready)
    usage = json.dumps({USAGE_ANNOTATION: '{"cpu": "250m", "memory": "64Mi"}'})
    for name, app, notes in (("web-1", "web", usage), ("db-1", "db", "{}")):
        manifest = _POD.replace("NAME", name).replace("APP", app)
        _kubectl(shared_server, "create", "-f", "-", stdin=manifest.replace("ANNOTATIONS", notes))
        _status(shared_server, "pod", name, {"phase": "Running"})
    _kubectl(
        shared_server,
        "create",
        "-f",
        "-",
        stdin=_POD.replace("NAME", "pending").replace("APP", "web").replace("ANNOTATIONS", "{}"),
    )
    return shared_server


@needs_kubectl
def test_pod_metrics_as_metrics_server_serves_them(cluster: SharedServer) -> None:
    raw = _kubectl(
        cluster, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-1"
    )
    doc = json.loads(raw)
    assert doc["kind"] == "PodMetrics"
    assert doc["metadata"]["labels"] == {"app": "web"}
    assert doc["window"] == "15s"
    assert doc["timestamp"].endswith("Z")
    assert doc["containers"] == [
        {"name": "app", "usage": {"cpu": "125m", "memory": "32Mi"}},
        {"name": "side", "usage": {"cpu": "125m", "memory": "32Mi"}},
    ]
    listed = json.loads(
        _kubectl(
            cluster, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dweb"
        )
    )
    assert listed["kind"] == "PodMetricsList"
    assert [p["metadata"]["name"] for p in listed["items"]] == ["web-1"]  # pending has none


@needs_kubectl
def test_a_pod_without_metrics_is_not_found(cluster: SharedServer) -> None:
    proc = subprocess.run(
        [
            "kubectl",
            "--kubeconfig",
            str(cluster.kubeconfig),
            "get",
            "--raw",
            "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pending",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "NotFound" in proc.stderr or "not found" in proc.stderr


@needs_kubectl
def test_kubectl_top_pods_and_nodes(cluster: SharedServer) -> None:
    pods = _kubectl(cluster, "top", "pods", "--containers").split("\n")
    assert any(line.split()[:4] == ["web-1", "app", "125m", "32Mi"] for line in pods), pods
    assert any(line.split()[:4] == ["db-1", "app", "50m", "10Mi"] for line in pods), pods
    nodes = _kubectl(cluster, "top", "nodes", "--no-headers").split()
    assert nodes[:2] == ["n1", "300m"], nodes  # 250m + 50m of its running pods
    assert "74Mi" in nodes, nodes
