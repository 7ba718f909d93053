"""``kcm`` in embedded mode with ``kubectl autoscale``: raising the pods' simulated usage
(the ``kcm.dev/simulate-usage`` annotation) scales the Deployment up, lowering it scales it down
once the (shortened) downscale stabilization window has passed; ``kubectl top`` shows the
usage."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.e2e_harness import Kubectl, embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl

_DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: 200m}}
"""

_FLAGS = (
    "--horizontal-pod-autoscaler-sync-period=1s",
    "--horizontal-pod-autoscaler-downscale-stabilization=3s",
    "--horizontal-pod-autoscaler-cpu-initialization-period=0s",
)


def _replicas(kubectl: Kubectl) -> int:
    return int(kubectl.json("get", "deployment", "web")["spec"]["replicas"])


def _annotate(kubectl: Kubectl, cpu: str) -> None:
    usage = json.dumps({"cpu": cpu})
    kubectl.run(
        "annotate", "pods", "-l", "app=web", f"kcm.dev/simulate-usage={usage}", "--overwrite"
    )


def _rescaled(kubectl: Kubectl, message: str) -> bool:
    events = kubectl.items("events", "--field-selector=reason=SuccessfulRescale")
    return any(e["message"] == message for e in events)


def _running(kubectl: Kubectl, count: int) -> bool:
    pods = kubectl.items("pods", "-l", "app=web")
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    return len(running) == count == len(pods)


def test_kubectl_autoscale_scales_up_and_down(tmp_path: Path) -> None:
    with embedded_kcm(tmp_path, *_FLAGS) as (process, kubectl):
        kubectl.run("create", "-f", "-", input=_DEPLOYMENT)
        wait_for("the first pod", lambda: _running(kubectl, 1))
        kubectl.run("autoscale", "deployment", "web", "--cpu-percent=50", "--min=1", "--max=5")
        _annotate(kubectl, "400m")  # 200% of the request: 4 replicas
        wait_for("the scale-up", lambda: _replicas(kubectl) >= 4)
        up = "New size: 4; reason: cpu resource utilization (percentage of request) above target"
        wait_for("the SuccessfulRescale event", lambda: _rescaled(kubectl, up))
        top = kubectl.run("top", "pods", "-l", "app=web", "--no-headers")
        assert "400m" in top, top
        wait_for("the new pods", lambda: _running(kubectl, _replicas(kubectl)))
        _annotate(kubectl, "10m")  # 5%: 1 replica, after the stabilization window
        wait_for("the scale-down", lambda: _replicas(kubectl) == 1)
        down = "New size: 1; reason: All metrics below target"
        wait_for("the scale-down event", lambda: _rescaled(kubectl, down))
        hpa = kubectl.json("get", "hpa", "web")
        assert hpa["status"]["desiredReplicas"] == 1
        assert process.proc.poll() is None, process.logs()
