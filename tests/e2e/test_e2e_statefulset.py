"""``kcm`` in embedded mode, driven with kubectl: a StatefulSet comes up in order on the
simulated nodes with a volume per pod (claims of the default class, provisioned on each pod's
node), ``kubectl rollout status / history / undo statefulset`` work, scaling down keeps the
claims and deleting one deletes its volume."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.e2e_harness import Kubectl, Process, embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl

# updateStrategy is written out: kube-apiserver defaults it (rollout status needs its type),
# kcm's embedded server does not yet.
STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  updateStrategy: {type: RollingUpdate}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.25"}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Kubectl]]:
    # --v=2: klog's steady-state lines ("starting 5 workers for controller ...")
    with embedded_kcm(tmp_path_factory.mktemp("e2e-statefulset"), "--v=2") as running:
        yield running
        process, _ = running
        assert process.stop() == 0, process.logs()


def web_pods(kubectl: Kubectl) -> list[dict[str, Any]]:
    return sorted(kubectl.items("pods", "-l", "app=web"), key=lambda p: p["metadata"]["name"])


def images(kubectl: Kubectl) -> list[str]:
    return [p["spec"]["containers"][0]["image"] for p in web_pods(kubectl)]


def assert_claims_provisioned(kubectl: Kubectl) -> None:
    """Each claim Bound to a volume the simulated provisioner made for it on its pod's node,
    and ``kubectl get pv,pvc`` with a real cluster's columns."""
    nodes = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in web_pods(kubectl)}
    volumes = {v["metadata"]["name"]: v for v in kubectl.items("pv")}
    for claim in kubectl.items("pvc", "-l", "app=web"):
        assert claim["status"]["phase"] == "Bound"
        assert claim["spec"]["storageClassName"] == "standard"
        volume = volumes[claim["spec"]["volumeName"]]
        assert volume["metadata"]["name"] == f"pvc-{claim['metadata']['uid']}"
        assert volume["status"]["phase"] == "Bound"
        assert volume["spec"]["csi"]["driver"] == "simulated.kcm.dev"
        pod = claim["metadata"]["name"].removeprefix("data-")
        selected = claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        assert selected == nodes[pod]
    pv_table, pvc_table = kubectl.run("get", "pv,pvc").split("\n\n")
    assert re.split(r"\s{2,}", pv_table.split("\n")[0].strip()) == [
        "NAME",
        "CAPACITY",
        "ACCESS MODES",
        "RECLAIM POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "REASON",
        "AGE",
    ]
    assert re.split(r"\s{2,}", pvc_table.split("\n")[0].strip()) == [
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS MODES",
        "STORAGECLASS",
        "AGE",
    ]
    row = next(line for line in pv_table.splitlines() if "default/data-web-0" in line).split()
    assert row[1:7] == ["1Gi", "RWO", "Delete", "Bound", "default/data-web-0", "standard"]


def test_statefulset_rollout_status_history_and_undo(cluster: tuple[Process, Kubectl]) -> None:
    _, kubectl = cluster
    kubectl.run("apply", "-f", "-", input=STATEFULSET)
    out = kubectl.run("rollout", "status", "statefulset/web", "--timeout=60s")
    assert "statefulset rolling update complete 3 pods at revision web-" in out
    pods = web_pods(kubectl)
    assert [p["metadata"]["name"] for p in pods] == ["web-0", "web-1", "web-2"]
    assert [p["spec"]["hostname"] for p in pods] == ["web-0", "web-1", "web-2"]
    assert all(p["spec"]["subdomain"] == "web" for p in pods)
    claims = sorted(c["metadata"]["name"] for c in kubectl.items("pvc", "-l", "app=web"))
    assert claims == ["data-web-0", "data-web-1", "data-web-2"]
    assert_claims_provisioned(kubectl)
    first = kubectl.json("get", "statefulset", "web")["status"]["currentRevision"]

    kubectl.run("annotate", "statefulset/web", "kubernetes.io/change-cause=nginx 1.26")
    kubectl.run("set", "image", "statefulset/web", "nginx=nginx:1.26")
    out = kubectl.run("rollout", "status", "statefulset/web", "--timeout=60s")
    assert "rolling update complete 3 pods at revision" in out
    wait_for("nginx:1.26 everywhere", lambda: images(kubectl) == ["nginx:1.26"] * 3)
    history = kubectl.run("rollout", "history", "statefulset/web")
    assert [line.split(None, 1) for line in history.splitlines()[2:] if line.strip()] == [
        ["1", "<none>"],
        ["2", "nginx 1.26"],
    ]
    assert "nginx:1.26" in kubectl.run("rollout", "history", "statefulset/web", "--revision=2")

    out = kubectl.run("rollout", "undo", "statefulset/web")
    assert "rolled back" in out
    kubectl.run("rollout", "status", "statefulset/web", "--timeout=60s")
    wait_for("nginx:1.25 again", lambda: images(kubectl) == ["nginx:1.25"] * 3)
    status = kubectl.json("get", "statefulset", "web")["status"]
    assert status["currentRevision"] == status["updateRevision"] == first  # reused, renumbered
    revisions = {
        r["metadata"]["name"]: r["revision"]
        for r in kubectl.items("controllerrevisions", "-l", "app=web")
    }
    assert revisions[first] == 3
    assert sorted(revisions.values()) == [2, 3]

    kubectl.run("scale", "statefulset/web", "--replicas=1")
    wait_for(
        "one pod left", lambda: [p["metadata"]["name"] for p in web_pods(kubectl)] == ["web-0"]
    )
    claims = sorted(c["metadata"]["name"] for c in kubectl.items("pvc", "-l", "app=web"))
    assert claims == ["data-web-0", "data-web-1", "data-web-2"]  # claims are kept

    volume = kubectl.json("get", "pvc", "data-web-2")["spec"]["volumeName"]
    kubectl.run("delete", "pvc", "data-web-2")  # reclaim policy Delete: its volume goes too
    wait_for(
        f"{volume} deleted",
        lambda: volume not in {v["metadata"]["name"] for v in kubectl.items("pv")},
    )


def test_kcm_runs_the_statefulset_controller_with_five_workers(
    cluster: tuple[Process, Kubectl],
) -> None:
    process, _ = cluster
    # the controllers start one after the other once the nodes are Ready: wait for its turn
    wait_for(
        "the statefulset controller's start line",
        lambda: "starting 5 workers for controller statefulset" in process.logs(),
    )
