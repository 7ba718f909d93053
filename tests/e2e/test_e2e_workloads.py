"""``kcm`` in embedded mode, driven with kubectl as a user would: Deployments roll out on the
simulated nodes, scale, update and delete in the foreground; CronJobs create Jobs that
complete."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.e2e_harness import (
    Kubectl,
    Process,
    embedded_kcm,
    kcm_command,
    needs_kubectl,
    wait_for,
)

pytestmark = needs_kubectl

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.25"}]
"""

CRONJOB = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick, namespace: default}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: tick, image: busybox, command: [date]}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Kubectl]]:
    with embedded_kcm(tmp_path_factory.mktemp("e2e-workloads")) as running:
        yield running
        process, _ = running
        assert process.stop() == 0, process.logs()  # SIGTERM: clean stop, exit 0
        assert "released the lock" in process.logs()


def test_kcm_runs_as_the_console_script(cluster: tuple[Process, Kubectl]) -> None:
    process, _ = cluster
    command = kcm_command()
    assert process.proc.args[: len(command)] == command  # type: ignore[index]
    if len(command) == 1:  # the `kcm` script is installed: that is what runs, not python -m
        assert Path(command[0]).name == "kcm"


def ready_replicas(kubectl: Kubectl, n: int) -> bool:
    status = kubectl.json("get", "deployment", "web").get("status", {})
    return status.get("readyReplicas") == n and status.get("updatedReplicas") == n


def web_pods(kubectl: Kubectl) -> list[dict[str, Any]]:
    return kubectl.items("pods", "-l", "app=web")


def test_deployment_rolls_out_scales_updates_and_deletes_in_the_foreground(
    cluster: tuple[Process, Kubectl],
) -> None:
    _, kubectl = cluster
    kubectl.run("apply", "-f", "-", input=DEPLOYMENT)
    wait_for("3 ready replicas", lambda: ready_replicas(kubectl, 3))
    pods = web_pods(kubectl)
    assert len(pods) == 3
    assert all(p["status"]["phase"] == "Running" for p in pods)
    assert all(p["spec"]["nodeName"].startswith("kcm-node-") for p in pods)

    kubectl.run("scale", "deployment/web", "--replicas=5")
    wait_for("5 ready replicas", lambda: ready_replicas(kubectl, 5))

    kubectl.run("set", "image", "deployment/web", "nginx=nginx:1.26")
    out = kubectl.run("rollout", "status", "deployment/web", "--timeout=60s")
    assert "successfully rolled out" in out
    wait_for("5 ready replicas after the update", lambda: ready_replicas(kubectl, 5))

    def only_new_pods() -> bool:
        images = [p["spec"]["containers"][0]["image"] for p in web_pods(kubectl)]
        return images == ["nginx:1.26"] * 5

    wait_for("only nginx:1.26 pods", only_new_pods)
    replica_sets = kubectl.items("replicasets", "-l", "app=web")
    assert sorted(rs["spec"]["replicas"] for rs in replica_sets) == [0, 5]
    revision = kubectl.json("get", "deployment", "web")["metadata"]["annotations"]
    assert revision["deployment.kubernetes.io/revision"] == "2"

    kubectl.run("delete", "deployment", "web", "--cascade=foreground", "--timeout=60s")
    assert kubectl.run("get", "deployment", "web", "--ignore-not-found") == ""
    assert kubectl.items("replicasets", "-l", "app=web") == []
    wait_for("the pods to go", lambda: web_pods(kubectl) == [])


def test_cronjob_creates_jobs_that_complete(cluster: tuple[Process, Kubectl]) -> None:
    _, kubectl = cluster
    kubectl.run("apply", "-f", "-", input=CRONJOB)
    # Pretend the last run was two minutes ago, so the controller owes a run for the current
    # minute now instead of at the next minute boundary (up to 60 s away).
    past = (datetime.now(UTC) - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:00Z")
    kubectl.run(
        "patch",
        "cronjob",
        "tick",
        "--subresource=status",
        "--type=merge",
        "-p",
        f'{{"status": {{"lastScheduleTime": "{past}"}}}}',
    )

    def completed_job() -> dict[str, Any] | None:
        for job in kubectl.items("jobs"):
            owners = job["metadata"].get("ownerReferences") or []
            conditions = job.get("status", {}).get("conditions") or []
            if any(o["kind"] == "CronJob" and o["name"] == "tick" for o in owners) and any(
                c["type"] == "Complete" and c["status"] == "True" for c in conditions
            ):
                return dict(job)
        return None

    job = wait_for("a completed Job of the CronJob", completed_job, within=45)
    assert job["metadata"]["name"].startswith("tick-")
    assert job["status"]["succeeded"] == 1
    pods = kubectl.items("pods", "-l", f"job-name={job['metadata']['name']}")
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]

    def last_schedule_moved() -> bool:
        status = kubectl.json("get", "cronjob", "tick").get("status", {})
        return status.get("lastScheduleTime", past) != past

    wait_for("lastScheduleTime to move on", last_schedule_moved)


POD = """
apiVersion: v1
kind: Pod
metadata: {name: hello, namespace: team}
spec:
  restartPolicy: Never
  containers: [{name: hello, image: busybox, command: [date]}]
"""


def test_a_new_namespace_gets_its_service_account_and_root_ca_and_runs_pods(
    cluster: tuple[Process, Kubectl],
) -> None:
    process, kubectl = cluster
    kubectl.run("create", "namespace", "team")

    def set_up() -> bool:
        accounts = [a["metadata"]["name"] for a in kubectl.items("serviceaccounts", "-n", "team")]
        maps = {m["metadata"]["name"]: m for m in kubectl.items("configmaps", "-n", "team")}
        return accounts == ["default"] and "kube-root-ca.crt" in maps

    wait_for("default and kube-root-ca.crt in the new namespace", set_up)
    root_ca = kubectl.json("get", "configmap", "kube-root-ca.crt", "-n", "team")
    # the embedded server's CA (HTTPS by default), as the kubeconfig trusts it
    cluster_ca = yaml.safe_load(kubectl.kubeconfig.read_text())["clusters"][0]["cluster"]
    ca_pem = base64.b64decode(cluster_ca["certificate-authority-data"]).decode()
    assert root_ca["data"] == {"ca.crt": ca_pem}
    assert root_ca["metadata"]["annotations"]["kubernetes.io/description"].startswith(
        "Contains a CA bundle"
    )
    kubectl.run("delete", "serviceaccount", "default", "-n", "team")
    wait_for("default again", set_up)
    kubectl.run("apply", "-f", "-", input=POD)

    def succeeded() -> bool:
        pod = kubectl.json("get", "pod", "hello", "-n", "team")
        return bool(pod.get("status", {}).get("phase") == "Succeeded")

    wait_for("the pod to run to completion", succeeded)
    assert (
        'Skipping controller serviceaccount-token: "serviceaccount-token" is disabled because '
        "there is no private key" in process.logs()
    )
