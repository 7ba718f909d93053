"""``kcm`` in embedded mode, driven with kubectl: a simulated node failed by its annotation goes
NotReady and is tainted, its pod is evicted (Terminating: its kubelet is gone) and replaced on
another node, and the node comes back when the annotation is removed. Shortened node-monitor
periods and a 1 s toleration keep it to a few seconds of real time."""

from __future__ import annotations

from typing import Any

from tests.e2e.e2e_harness import Kubectl, embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute,
         tolerationSeconds: 1}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute,
         tolerationSeconds: 1}
      containers: [{name: web, image: nginx}]
"""


def _pods(kubectl: Kubectl) -> list[dict[str, Any]]:
    return kubectl.items("pods", "-l", "app=web")


def _running_on(kubectl: Kubectl) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["spec"].get("nodeName", "")
        for p in _pods(kubectl)
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    }


def _spread(kubectl: Kubectl) -> dict[str, str] | None:
    running = _running_on(kubectl)
    return running if len(set(running.values())) == 3 else None


def _ready(kubectl: Kubectl, node: str) -> str:
    conditions = kubectl.json("get", "node", node)["status"]["conditions"]
    return next(c["status"] for c in conditions if c["type"] == "Ready")


def _taints(kubectl: Kubectl, node: str) -> set[str]:
    taints = kubectl.json("get", "node", node)["spec"].get("taints") or []
    return {f"{t['key']}:{t['effect']}" for t in taints}


def test_a_failed_node_loses_its_pods_to_the_others_and_comes_back(tmp_path: Any) -> None:
    # a grace of a few heartbeats: kcm's start (the garbage collector's discovery) can hold
    # its event loop for a second or two on a loaded machine, delaying Lease events
    flags = (
        "--node-monitor-period=1s",
        "--node-monitor-grace-period=8s",
        "--simulate-node-heartbeat=1s",
    )
    with embedded_kcm(tmp_path, *flags) as (process, kubectl):
        kubectl.run("apply", "-f", "-", input=DEPLOYMENT)
        placed = wait_for("3 web pods running, one per node", lambda: _spread(kubectl))
        victim = next(name for name, node in placed.items() if node == "kcm-node-1")

        kubectl.run("annotate", "node", "kcm-node-1", "kcm.dev/simulate-node-failure=true")
        wait_for("kcm-node-1 NotReady", lambda: _ready(kubectl, "kcm-node-1") == "Unknown")
        wait_for(
            "the unreachable taints",
            lambda: (
                _taints(kubectl, "kcm-node-1")
                == {
                    "node.kubernetes.io/unreachable:NoSchedule",
                    "node.kubernetes.io/unreachable:NoExecute",
                }
            ),
        )

        def replaced() -> bool:
            pods = {p["metadata"]["name"]: p for p in _pods(kubectl)}
            running = _running_on(kubectl)
            return (
                bool(pods.get(victim, {}).get("metadata", {}).get("deletionTimestamp"))
                and len(running) == 3
                and "kcm-node-1" not in running.values()
            )

        wait_for("the evicted pod replaced on the other nodes", replaced)
        events = kubectl.items("events", "--field-selector", f"involvedObject.name={victim}")
        assert any(e["reason"] == "TaintManagerEviction" for e in events)

        kubectl.run("annotate", "node", "kcm-node-1", "kcm.dev/simulate-node-failure-")
        wait_for(
            "kcm-node-1 Ready and untainted, the evicted pod gone",
            lambda: (
                _ready(kubectl, "kcm-node-1") == "True"
                and not _taints(kubectl, "kcm-node-1")
                and victim not in {p["metadata"]["name"] for p in _pods(kubectl)}
            ),
        )
        assert process.stop() == 0, process.logs()
