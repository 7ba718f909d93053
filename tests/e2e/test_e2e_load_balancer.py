"""``kcm`` in embedded mode runs the service controller on the local cloud: a Deployment
exposed with ``kubectl expose --type=LoadBalancer`` gets an EXTERNAL-IP from the pool, and
deleting the Service releases it (the cleanup finalizer goes)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.e2e_harness import embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl


def test_a_load_balancer_service_gets_an_external_ip(tmp_path: Path) -> None:
    pool = tmp_path / "cloud.yaml"
    pool.write_text("loadBalancerIPPool: 192.0.2.10-192.0.2.11\n")
    with embedded_kcm(tmp_path, f"--cloud-config={pool}") as (process, kubectl):
        kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=1")
        kubectl.run("expose", "deployment", "web", "--type=LoadBalancer", "--port=80")

        def external_ip() -> str:
            return kubectl.run(
                "get", "service", "web", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}"
            )

        assert wait_for("an EXTERNAL-IP", external_ip) == "192.0.2.10"
        table = kubectl.run("get", "service", "web")
        assert "192.0.2.10" in table.splitlines()[1]  # the EXTERNAL-IP column
        service = kubectl.json("get", "service", "web")
        assert "service.kubernetes.io/load-balancer-cleanup" in service["metadata"]["finalizers"]

        def reasons() -> set[str]:
            events = kubectl.items("events", "--field-selector", "involvedObject.name=web")
            return {e["reason"] for e in events if e["involvedObject"]["kind"] == "Service"}

        wait_for("the load balancer events", lambda: {"EnsuredLoadBalancer"} <= reasons())
        assert "EnsuringLoadBalancer" in reasons()

        kubectl.run("delete", "service", "web", "--wait=true", "--timeout=30s")
        assert kubectl.run("get", "service", "web", "--ignore-not-found") == ""
        assert process.proc.poll() is None, process.logs()
        assert "Skipping controller service:" not in process.logs()
