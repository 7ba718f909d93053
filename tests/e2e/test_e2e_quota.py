"""``kcm`` in embedded mode with a ResourceQuota, driven with kubectl as on a real cluster:
``kubectl create quota q --hard=pods=2`` and a Deployment of 3 replicas give 2 pods, and the
ReplicaSet's FailedCreate event carries kube-apiserver's quota text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.e2e_harness import embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl

_EXCEEDED = "is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"


def test_a_deployment_stops_at_the_quota(tmp_path: Path) -> None:
    with embedded_kcm(tmp_path) as (process, kubectl):
        kubectl.run("create", "quota", "q", "--hard=pods=2")
        wait_for(
            "the quota's status",
            lambda: (kubectl.json("get", "quota", "q").get("status") or {}).get("used"),
        )
        kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=3")

        def refused() -> list[dict[str, Any]]:
            events = kubectl.items("events", "--field-selector=reason=FailedCreate")
            return [e for e in events if _EXCEEDED in e.get("message", "")]

        event = wait_for("the FailedCreate event", refused)[0]
        assert event["involvedObject"]["kind"] == "ReplicaSet"
        assert event["message"].startswith('Error creating: pods "web-')
        assert len(kubectl.items("pods", "-l", "app=web")) == 2
        used = kubectl.json("get", "quota", "q")["status"]["used"]
        assert used == {"pods": "2"}
        assert process.proc.poll() is None, process.logs()
