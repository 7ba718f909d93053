"""``kcm`` in embedded mode with a DaemonSet, driven with kubectl as a user would: one running
pod per simulated node; a NoSchedule taint keeps the pod it finds (Kubernetes does not
evict for it), a NoExecute taint makes the DaemonSet remove its pod, a cordon changes nothing
for daemon pods; a node created at run time gets a pod; an image change rolls out
(``kubectl rollout status``) and ``kubectl rollout undo`` goes back to the first revision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.e2e_harness import Kubectl, Process, embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl

DAEMON_SET = """
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

NEW_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: kcm-node-4
  labels: {kcm.dev/simulated: "true"}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Kubectl]]:
    with embedded_kcm(
        tmp_path_factory.mktemp("e2e-daemonset"), "--simulate-node-heartbeat=1s"
    ) as running:
        yield running
        process, _ = running
        assert process.stop() == 0, process.logs()


def running_pods(kubectl: Kubectl) -> dict[str, dict[str, Any]]:
    """The agent's pods by node, Running and not being deleted."""
    out = {}
    for pod in kubectl.items("pods", "-l", "app=agent"):
        if pod["metadata"].get("deletionTimestamp") or pod["status"].get("phase") != "Running":
            continue
        out[pod["spec"].get("nodeName", "")] = pod
    return out


def on_nodes(kubectl: Kubectl, *nodes: str) -> bool:
    pods = kubectl.items("pods", "-l", "app=agent")
    return sorted(running_pods(kubectl)) == sorted(nodes) and len(pods) == len(nodes)


def status(kubectl: Kubectl) -> dict[str, Any]:
    return dict(kubectl.json("get", "daemonset", "agent").get("status", {}))


def test_daemon_set_follows_nodes_and_rolls_out(cluster: tuple[Process, Kubectl]) -> None:
    _, kubectl = cluster
    kubectl.run("apply", "-f", "-", input=DAEMON_SET)
    out = kubectl.run("rollout", "status", "daemonset/agent", "--timeout=60s")
    assert 'daemon set "agent" successfully rolled out' in out
    wait_for("a running pod on every node", lambda: on_nodes(kubectl, *NODES))
    pod = running_pods(kubectl)["kcm-node-1"]
    [term] = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert term == {
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["kcm-node-1"]}]
    }

    # NoSchedule: no new pod would go there, but the one there stays (misscheduled).
    kubectl.run("taint", "node", "kcm-node-1", "dedicated=infra:NoSchedule")
    wait_for(
        "the pod on the tainted node counted as misscheduled",
        lambda: (
            status(kubectl).get("numberMisscheduled") == 1
            and status(kubectl).get("desiredNumberScheduled") == 2
        ),
    )
    assert on_nodes(kubectl, *NODES)

    # NoExecute: the DaemonSet removes its pod.
    kubectl.run("taint", "node", "kcm-node-2", "drain=now:NoExecute")
    wait_for("no pod on kcm-node-2", lambda: on_nodes(kubectl, "kcm-node-1", "kcm-node-3"))

    # A cordon does not keep a daemon away.
    kubectl.run("cordon", "kcm-node-3")
    kubectl.run("taint", "node", "kcm-node-2", "drain=now:NoExecute-")
    wait_for("a pod on kcm-node-2 again", lambda: on_nodes(kubectl, *NODES))

    # A node added at run time gets its pod.
    kubectl.run("create", "-f", "-", input=NEW_NODE)
    wait_for("a pod on kcm-node-4", lambda: on_nodes(kubectl, *NODES, "kcm-node-4"))
    kubectl.run("taint", "node", "kcm-node-1", "dedicated=infra:NoSchedule-")
    kubectl.run("uncordon", "kcm-node-3")

    # An image change rolls out node by node.
    kubectl.run("set", "image", "daemonset/agent", "agent=agent:2")
    out = kubectl.run("rollout", "status", "daemonset/agent", "--timeout=90s")
    assert 'daemon set "agent" successfully rolled out' in out

    def images(image: str) -> bool:
        pods = running_pods(kubectl)
        return len(pods) == 4 and all(
            p["spec"]["containers"][0]["image"] == image for p in pods.values()
        )

    wait_for("agent:2 everywhere", lambda: images("agent:2"))
    history = kubectl.run("rollout", "history", "daemonset/agent")
    revisions = [line.split()[0] for line in history.splitlines()[2:] if line.strip()]
    assert revisions == ["1", "2"]

    kubectl.run("rollout", "undo", "daemonset/agent")
    out = kubectl.run("rollout", "status", "daemonset/agent", "--timeout=90s")
    assert 'daemon set "agent" successfully rolled out' in out
    wait_for("agent:1 everywhere", lambda: images("agent:1"))
    history = kubectl.run("rollout", "history", "daemonset/agent")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]


NODES = ("kcm-node-1", "kcm-node-2", "kcm-node-3")
