"""``kcm`` in embedded mode with a Deployment under a PodDisruptionBudget, driven with kubectl
as a user would: ``kubectl create pdb`` and ``kubectl get pdb`` (the real columns), then
``kubectl drain --ignore-daemonsets`` of the node holding all three replicas: the first
eviction takes the budget's one disruption, the next ones are refused with 429 until the
replacement pod is Ready on another node (kubectl retries), and the drain completes with
the workload's pods soon Ready elsewhere and the DaemonSet's pod left alone."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.e2e_harness import Kubectl, Process, embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl

WORKLOAD = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: web, image: "web:1"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "agent:1"}]
"""

DRAINED = "kcm-node-1"
OTHERS = ("kcm-node-2", "kcm-node-3")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Kubectl]]:
    with embedded_kcm(
        tmp_path_factory.mktemp("e2e-drain"), "--simulate-node-heartbeat=1s"
    ) as running:
        yield running
        process, _ = running
        assert process.stop() == 0, process.logs()


def _ready(pod: dict[str, Any]) -> bool:
    return pod["status"].get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", [])
    )


def ready_web_pods(kubectl: Kubectl) -> dict[str, str]:
    """Ready web pods not being deleted: name -> node."""
    return {
        p["metadata"]["name"]: p["spec"].get("nodeName", "")
        for p in kubectl.items("pods", "-l", "app=web")
        if not p["metadata"].get("deletionTimestamp") and _ready(p)
    }


def budget(kubectl: Kubectl) -> dict[str, Any]:
    return dict(kubectl.json("get", "pdb", "web").get("status", {}))


def test_drain_waits_on_the_budget_and_completes(cluster: tuple[Process, Kubectl]) -> None:
    _, kubectl = cluster
    # Every replica on one node: the others are cordoned while the Deployment comes up.
    for node in OTHERS:
        kubectl.run("cordon", node)
    kubectl.run("apply", "-f", "-", input=WORKLOAD)
    wait_for(
        "3 Ready web pods on the first node",
        lambda: sorted(ready_web_pods(kubectl).values()) == [DRAINED] * 3,
        within=60,
    )
    for node in OTHERS:
        kubectl.run("uncordon", node)

    out = kubectl.run("create", "pdb", "web", "--selector=app=web", "--max-unavailable=1")
    assert out.strip() == "poddisruptionbudget.policy/web created"
    wait_for(
        "the budget's status",
        lambda: (
            budget(kubectl).get("disruptionsAllowed") == 1
            and budget(kubectl).get("currentHealthy") == 3
        ),
    )
    table = kubectl.run("get", "pdb", "web").splitlines()
    assert table[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED",
                                "DISRUPTIONS", "AGE"]  # fmt: skip
    assert table[1].split()[:4] == ["web", "N/A", "1", "1"]
    status = budget(kubectl)
    assert (status["expectedPods"], status["desiredHealthy"]) == (3, 2)
    assert status["conditions"][0]["reason"] == "SufficientPods"

    before = set(ready_web_pods(kubectl))
    drain = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubectl.kubeconfig), "drain", DRAINED,
         "--ignore-daemonsets", "--timeout=120s"],
        capture_output=True, text=True, timeout=150, check=False,
    )  # fmt: skip
    assert drain.returncode == 0, drain.stderr
    assert f"node/{DRAINED} drained" in drain.stdout
    # kubectl's retry of a 429, on stderr, with the server's message.
    assert (
        "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption "
        "budget." in drain.stderr
    )
    assert "Warning: ignoring DaemonSet-managed Pods: default/agent-" in drain.stderr
    # The last eviction's replacement may still be starting when kubectl returns.
    wait_for("3 Ready web pods again", lambda: len(ready_web_pods(kubectl)) == 3)
    after = ready_web_pods(kubectl)
    assert set(after.values()) <= set(OTHERS)
    assert not before & set(after)
    agents = [p["spec"].get("nodeName") for p in kubectl.items("pods", "-l", "app=agent")]
    assert DRAINED in agents  # --ignore-daemonsets: the DaemonSet's pod stays
    node = kubectl.json("get", "node", DRAINED)
    assert node["spec"]["unschedulable"] is True
    kubectl.run("uncordon", DRAINED)
