"""Conformance: kubectl v1.32 against the embedded server, checking the resulting objects."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

SharedServer = Any  # the shared_server fixture (tests/apiserver/conftest.py)

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: kc
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:IMAGE
        ports: [{containerPort: 80}]
"""

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.size}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
"""


def kubectl(server: SharedServer, *args: str, stdin: str | None = None, check: bool = True) -> str:
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(server.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout + (proc.stderr if not check else "")


def wait_for_watch(server: SharedServer, before: int) -> None:
    """Block until a watch opens after ``before`` had been opened in all (kubectl's)."""
    store = server.server.store

    async def wait() -> None:
        with anyio.fail_after(20):
            while store.watches_added <= before:
                await store.wait_watch_added()

    server.portal.call(wait)


def json_stream(chunks: list[str]) -> list[Any]:
    """The complete JSON objects in kubectl's ``-o json`` watch output so far."""
    decoder = json.JSONDecoder()
    text, objects, idx = "".join(chunks), [], 0
    while True:
        while idx < len(text) and text[idx].isspace():
            idx += 1
        try:
            obj, idx = decoder.raw_decode(text, idx)
        except json.JSONDecodeError:
            return objects
        objects.append(obj)


def get_json(server: SharedServer, *args: str) -> Any:
    return json.loads(kubectl(server, "get", *args, "-o", "json", "--show-managed-fields"))


@pytest.fixture(scope="module")
def ns(shared_server: SharedServer) -> str:
    kubectl(
        shared_server,
        "apply",
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kc\n",
    )
    return "kc"


def test_create_get_label_annotate_delete(shared_server: SharedServer, ns: str) -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n"
    assert "configmap/cfg created" in kubectl(
        shared_server, "-n", ns, "create", "-f", "-", stdin=cm
    )
    kubectl(shared_server, "-n", ns, "label", "cm", "cfg", "tier=web")
    kubectl(shared_server, "-n", ns, "annotate", "cm", "cfg", "note=hello")
    obj = get_json(shared_server, "-n", ns, "cm", "cfg")
    assert obj["data"] == {"a": "b"}
    assert obj["metadata"]["labels"] == {"tier": "web"}
    assert obj["metadata"]["annotations"] == {"note": "hello"}
    assert [
        o["metadata"]["name"]
        for o in get_json(shared_server, "-n", ns, "cm", "-l", "tier=web")["items"]
    ] == ["cfg"]
    table = kubectl(shared_server, "-n", ns, "get", "cm", "cfg")
    assert table.split()[:3] == ["NAME", "DATA", "AGE"]
    kubectl(shared_server, "-n", ns, "delete", "cm", "cfg")
    out = kubectl(shared_server, "-n", ns, "get", "cm", "cfg", check=False)
    assert 'configmaps "cfg" not found' in out


def test_apply_patch_scale(shared_server: SharedServer, ns: str, tmp_path: Path) -> None:
    manifest = tmp_path / "dep.yaml"
    manifest.write_text(DEPLOYMENT.replace("IMAGE", "1.25"))
    assert "created" in kubectl(shared_server, "apply", "-f", str(manifest))
    manifest.write_text(DEPLOYMENT.replace("IMAGE", "1.26"))
    assert "configured" in kubectl(shared_server, "apply", "-f", str(manifest))
    dep = get_json(shared_server, "-n", ns, "deploy", "web")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert dep["metadata"]["generation"] == 2
    assert "kubectl.kubernetes.io/last-applied-configuration" in dep["metadata"]["annotations"]

    kubectl(shared_server, "-n", ns, "scale", "deploy", "web", "--replicas=4")
    assert get_json(shared_server, "-n", ns, "deploy", "web")["spec"]["replicas"] == 4

    kubectl(
        shared_server,
        "-n",
        ns,
        "patch",
        "deploy",
        "web",
        "--type=merge",
        "-p",
        '{"metadata":{"labels":{"m":"1"}}}',
    )
    kubectl(
        shared_server,
        "-n",
        ns,
        "patch",
        "deploy",
        "web",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/metadata/labels/j","value":"2"}]',
    )
    kubectl(
        shared_server,
        "-n",
        ns,
        "patch",
        "deploy",
        "web",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}',
    )
    dep = get_json(shared_server, "-n", ns, "deploy", "web")
    assert dep["metadata"]["labels"] == {"m": "1", "j": "2"}
    containers = {c["name"]: c["image"] for c in dep["spec"]["template"]["spec"]["containers"]}
    assert containers == {"nginx": "nginx:1.26", "side": "busybox"}


def test_server_side_apply(shared_server: SharedServer, ns: str, tmp_path: Path) -> None:
    manifest = tmp_path / "ssa.yaml"
    manifest.write_text(DEPLOYMENT.replace("web", "ssa").replace("IMAGE", "1.0"))
    assert "serverside-applied" in kubectl(
        shared_server, "apply", "--server-side", "-f", str(manifest)
    )
    dep = get_json(shared_server, "-n", ns, "deploy", "ssa")
    managers = {m["manager"]: m["operation"] for m in dep["metadata"]["managedFields"]}
    assert managers == {"kubectl": "Apply"}
    manifest.write_text(DEPLOYMENT.replace("web", "ssa").replace("IMAGE", "2.0"))
    out = kubectl(
        shared_server,
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        str(manifest),
        check=False,
    )
    assert "conflict" in out.lower()
    kubectl(
        shared_server,
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        str(manifest),
    )
    dep = get_json(shared_server, "-n", ns, "deploy", "ssa")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2.0"
    assert "other" in {m["manager"] for m in dep["metadata"]["managedFields"]}


def test_delete_cascade_foreground_and_orphan(shared_server: SharedServer, ns: str) -> None:
    for name in ("fg", "orph"):
        kubectl(
            shared_server,
            "-n",
            ns,
            "create",
            "-f",
            "-",
            stdin=f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n",
        )
    kubectl(shared_server, "-n", ns, "delete", "cm", "fg", "--cascade=foreground", "--wait=false")
    kubectl(shared_server, "-n", ns, "delete", "cm", "orph", "--cascade=orphan", "--wait=false")
    fg = get_json(shared_server, "-n", ns, "cm", "fg")
    orph = get_json(shared_server, "-n", ns, "cm", "orph")
    assert fg["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert fg["metadata"]["deletionTimestamp"]
    assert orph["metadata"]["finalizers"] == ["orphan"]


def test_get_watch_sees_changes(shared_server: SharedServer, ns: str) -> None:
    kubectl(
        shared_server,
        "-n",
        ns,
        "create",
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\n",
    )
    watches = shared_server.server.store.watches_added
    proc = subprocess.Popen(
        [
            "kubectl",
            "--kubeconfig",
            str(shared_server.kubeconfig),
            "-n",
            ns,
            "get",
            "cm",
            "watched",
            "--watch",
            "-o",
            "json",
            "--request-timeout=10s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        wait_for_watch(shared_server, watches)  # kubectl watches now: the label is seen live
        kubectl(shared_server, "-n", ns, "label", "cm", "watched", "seen=yes")
        deadline = time.monotonic() + 20
        while (labels := [o["metadata"].get("labels") for o in json_stream(printed)]) != [
            None,
            {"seen": "yes"},
        ]:
            assert time.monotonic() < deadline, f"kubectl printed {labels}"
            time.sleep(0.02)  # polls kubectl's output (a blocking pipe read)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        reader.join(timeout=10)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()


def test_wait_for_condition(shared_server: SharedServer, ns: str) -> None:
    kubectl(
        shared_server,
        "-n",
        ns,
        "create",
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "spec:\n  containers: [{name: c, image: busybox}]\n",
    )
    watches = shared_server.server.store.watches_added
    proc = subprocess.Popen(
        [
            "kubectl",
            "--kubeconfig",
            str(shared_server.kubeconfig),
            "-n",
            ns,
            "wait",
            "pod/p",
            "--for=condition=Ready",
            "--timeout=20s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_watch(shared_server, watches)  # kubectl waits on a watch: the change is seen live
    status = '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}'
    kubectl(
        shared_server,
        "-n",
        ns,
        "patch",
        "pod",
        "p",
        "--subresource=status",
        "--type=merge",
        "-p",
        status,
    )
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "condition met" in out


def test_api_resources_and_crd(shared_server: SharedServer, ns: str) -> None:
    out = kubectl(shared_server, "api-resources")
    rows = {line.split()[0] for line in out.splitlines()[1:]}
    assert {"pods", "deployments", "leases", "customresourcedefinitions"} <= rows
    kubectl(shared_server, "apply", "-f", "-", stdin=CRD)
    out = kubectl(shared_server, "api-resources", "--api-group=example.com")
    assert "widgets" in out
    assert "wd" in out
    widget = (
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n"
        "spec:\n  size: 1\n  color: red\n"
    )
    kubectl(shared_server, "-n", ns, "apply", "-f", "-", stdin=widget)
    kubectl(shared_server, "-n", ns, "scale", "widget", "w1", "--replicas=3")
    got = get_json(shared_server, "-n", ns, "wd", "w1")
    assert got["spec"] == {"size": 3, "color": "red"}
    table = kubectl(shared_server, "-n", ns, "get", "widgets")
    assert table.split()[:2] == ["NAME", "SIZE"]
    assert "w1" in table
    kubectl(
        shared_server,
        "-n",
        ns,
        "patch",
        "widget",
        "w1",
        "--type=merge",
        "-p",
        '{"spec":{"color":"blue"}}',
    )
    assert get_json(shared_server, "-n", ns, "widget", "w1")["spec"]["color"] == "blue"
    kubectl(shared_server, "-n", ns, "delete", "widget", "w1")
    assert get_json(shared_server, "-n", ns, "widgets")["items"] == []


def test_typed_create_commands_send_protobuf(shared_server: SharedServer) -> None:
    kubectl(shared_server, "create", "namespace", "pb")
    kubectl(shared_server, "-n", "pb", "create", "configmap", "c", "--from-literal=a=b")
    kubectl(shared_server, "-n", "pb", "create", "secret", "generic", "s", "--from-literal=pw=x")
    kubectl(shared_server, "-n", "pb", "create", "serviceaccount", "sa")
    ns = get_json(shared_server, "namespace", "pb")
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    assert ns["status"]["phase"] == "Active"
    assert get_json(shared_server, "-n", "pb", "cm", "c")["data"] == {"a": "b"}
    secret = get_json(shared_server, "-n", "pb", "secret", "s")
    assert secret["data"] == {"pw": "eA=="}
    assert secret["type"] == "Opaque"
    assert get_json(shared_server, "-n", "pb", "sa", "sa")["metadata"]["name"] == "sa"


def test_typed_workload_commands(shared_server: SharedServer) -> None:
    kubectl(shared_server, "create", "namespace", "wl")
    kubectl(
        shared_server,
        "-n",
        "wl",
        "create",
        "deployment",
        "d",
        "--image=nginx:1",
        "--replicas=3",
        "--port=8080",
    )
    dep = get_json(shared_server, "-n", "wl", "deploy", "d")
    assert dep["spec"]["replicas"] == 3
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "d"}}
    [container] = dep["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "nginx:1"
    assert container["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert dep["spec"]["strategy"]["type"] == "RollingUpdate"
    kubectl(
        shared_server, "-n", "wl", "expose", "deployment", "d", "--port=80", "--target-port=8080"
    )
    svc = get_json(shared_server, "-n", "wl", "svc", "d")
    assert svc["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert svc["spec"]["selector"] == {"app": "d"}
    assert svc["spec"]["clusterIP"]
    kubectl(shared_server, "-n", "wl", "create", "job", "j", "--image=busybox", "--", "echo", "hi")
    job = get_json(shared_server, "-n", "wl", "job", "j")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "j"
    kubectl(
        shared_server,
        "-n",
        "wl",
        "create",
        "cronjob",
        "cj",
        "--image=busybox",
        "--schedule=*/5 * * * *",
    )
    cj = get_json(shared_server, "-n", "wl", "cronjob", "cj")
    assert cj["spec"]["schedule"] == "*/5 * * * *"
