"""``kubectl get`` tables: kube's printer columns (and ``-o wide`` ones) for the kinds kcm's
controllers and simulation touch, and kubectl's pod STATUS logic."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kcm.apiserver._printers import human_duration, pod_status
from kcm.testing import FakeClock

from .test_kubectl import kubectl  # the one kubectl runner

SharedServer = Any  # the shared_server fixture (tests/apiserver/conftest.py)

NOW = datetime.now(UTC).replace(microsecond=0)
# Read by the shared_server fixture: this module's server stands still at NOW (nothing here
# sleeps on its clock), so ages such as "3m" cannot drift while kubectl runs.
SERVER_CLOCK = FakeClock(wall_start=NOW)

needs_kubectl = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl is not installed"
)


def ts(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- unit: apimachinery's HumanDuration and kubectl's printPod ---------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (330, "5m30s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 20 * 60, "3h20m"),
        (30 * 3600, "30h"),
        (3 * 86400 + 4 * 3600, "3d4h"),
        (20 * 86400, "20d"),
        (3 * 365 * 86400 + 10 * 86400, "3y10d"),
        (10 * 365 * 86400, "10y"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def running(name: str = "c", ready: bool = True, restarts: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ts(60)}},
    }


def pod(
    phase: str, statuses: list[dict[str, Any]], *, containers: int = 1, **extra: Any
) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "creationTimestamp": ts(30), **extra.pop("metadata", {})},
        "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)], **extra},
        "status": {"phase": phase, "containerStatuses": statuses},
    }


def test_pod_status_follows_kubectl() -> None:
    assert pod_status(pod("Pending", []), NOW) == ("0/1", "Pending", "0")
    assert pod_status(pod("Running", [running()]), NOW) == ("1/1", "Running", "0")
    done = {"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    assert pod_status(pod("Succeeded", [done]), NOW) == ("0/1", "Completed", "0")
    failed = {"name": "c", "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}
    assert pod_status(pod("Failed", [failed]), NOW)[1] == "Error"
    assert pod_status(
        pod("Failed", [{"name": "c", "state": {"terminated": {"exitCode": 3}}}]), NOW
    )[1] == ("ExitCode:3")
    waiting = {"name": "c", "state": {"waiting": {"reason": "ContainerCreating"}}}
    assert pod_status(pod("Pending", [waiting]), NOW)[1] == "ContainerCreating"
    deleting = pod("Running", [running()], metadata={"deletionTimestamp": ts(0)})
    assert pod_status(deleting, NOW)[1] == "Terminating"
    finished_deleting = pod("Succeeded", [done], metadata={"deletionTimestamp": ts(0)})
    assert pod_status(finished_deleting, NOW)[1] == "Completed"  # terminal pods never "Terminating"
    # one container done, one still running and the pod Ready: Running
    mixed = pod("Running", [done, running("c1")], containers=2)
    mixed["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert pod_status(mixed, NOW)[:2] == ("1/2", "Running")
    restarted = running(restarts=2)
    restarted["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": ts(300)}}
    assert pod_status(pod("Running", [restarted]), NOW)[2] == "2 (5m ago)"


def test_pod_status_init_containers() -> None:
    p = pod("Pending", [], initContainers=[{"name": "i0"}, {"name": "i1"}])
    p["status"]["initContainerStatuses"] = [
        {"name": "i0", "state": {"terminated": {"exitCode": 0}}},
        {"name": "i1", "state": {"running": {}}},
    ]
    assert pod_status(p, NOW)[1] == "Init:1/2"
    p["status"]["initContainerStatuses"][1] = {
        "name": "i1",
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
    }
    assert pod_status(p, NOW)[1] == "Init:CrashLoopBackOff"


# -- kubectl get / get -o wide against the embedded server ------------------------------------


def apply(server: SharedServer, obj: dict[str, Any], status: dict[str, Any] | None = None) -> None:
    kubectl(server, "apply", "-f", "-", stdin=json.dumps(obj))
    if status is not None:
        kind = obj["kind"].lower()
        ns = ["-n", obj["metadata"]["namespace"]] if "namespace" in obj["metadata"] else []
        kubectl(
            server,
            *ns,
            "patch",
            kind,
            obj["metadata"]["name"],
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": status}),
        )


def table(server: SharedServer, *args: str) -> list[list[str]]:
    """``kubectl get`` output split into columns (on runs of 2+ spaces)."""
    lines = kubectl(server, "get", *args).strip().splitlines()
    return [re.split(r"\s{2,}", line.strip()) for line in lines]


TEMPLATE = {
    "metadata": {"labels": {"app": "t"}},
    "spec": {
        "containers": [{"name": "web", "image": "nginx:1.25"}, {"name": "side", "image": "busybox"}]
    },
}


@pytest.fixture(scope="module")
def ns(shared_server: SharedServer) -> str:
    kubectl(shared_server, "create", "namespace", "tbl")
    return "tbl"


@pytest.mark.kubectl
@needs_kubectl
def test_nodes(shared_server: SharedServer) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
        "spec": {"unschedulable": True},
    }
    apply(
        shared_server,
        node,
        {
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.7"}],
            "nodeInfo": {
                "kubeletVersion": "v1.32.0",
                "osImage": "Ubuntu",
                "kernelVersion": "6.1",
                "containerRuntimeVersion": "containerd://1.7",
                "architecture": "amd64",
                "bootID": "",
                "kubeProxyVersion": "",
                "machineID": "",
                "operatingSystem": "linux",
                "systemUUID": "",
            },
        },
    )
    rows = table(shared_server, "nodes", "n1")
    assert rows[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert rows[1][:3] == ["n1", "Ready,SchedulingDisabled", "control-plane"]
    assert rows[1][4] == "v1.32.0"
    wide = table(shared_server, "nodes", "n1", "-o", "wide")
    assert wide[0] == [
        "NAME",
        "STATUS",
        "ROLES",
        "AGE",
        "VERSION",
        "INTERNAL-IP",
        "EXTERNAL-IP",
        "OS-IMAGE",
        "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
    ]
    assert wide[1][5:] == ["10.0.0.7", "<none>", "Ubuntu", "6.1", "containerd://1.7"]


@pytest.mark.kubectl
@needs_kubectl
def test_pods_wide_and_completed(shared_server: SharedServer, ns: str) -> None:
    def make(name: str, **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
        }

    apply(
        shared_server,
        make("run", nodeName="n1", readinessGates=[{"conditionType": "example.com/lb"}]),
        {
            "phase": "Running",
            "podIP": "10.244.1.5",
            "podIPs": [{"ip": "10.244.1.5"}],
            "conditions": [{"type": "example.com/lb", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "c",
                    "image": "busybox",
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": ts(10)}},
                }
            ],
        },
    )
    apply(
        shared_server,
        make("done", nodeName="n1", restartPolicy="Never"),
        {
            "phase": "Succeeded",
            "containerStatuses": [
                {
                    "name": "c",
                    "image": "busybox",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                }
            ],
        },
    )
    apply(shared_server, make("pending"))
    rows = table(shared_server, "-n", ns, "pods")
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    by_name = {r[0]: r for r in rows[1:]}
    assert by_name["done"][1:4] == ["0/1", "Completed", "0"]
    assert by_name["run"][1:4] == ["1/1", "Running", "0"]
    assert by_name["pending"][1:4] == ["0/1", "Pending", "0"]
    wide = table(shared_server, "-n", ns, "pods", "-o", "wide")
    assert wide[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    by_name = {r[0]: r for r in wide[1:]}
    assert by_name["run"][5:] == ["10.244.1.5", "n1", "<none>", "1/1"]
    assert by_name["pending"][5:] == ["<none>", "<none>", "<none>", "<none>"]


@pytest.mark.kubectl
@needs_kubectl
def test_deployments_and_replicasets(shared_server: SharedServer, ns: str) -> None:
    spec = {"replicas": 3, "selector": {"matchLabels": {"app": "t"}}, "template": TEMPLATE}
    meta = {"name": "d", "namespace": ns}
    apply(
        shared_server,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec},
        {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    )
    rs_spec = {
        **spec,
        "selector": {
            "matchLabels": {"app": "t"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
        },
        "template": {**TEMPLATE, "metadata": {"labels": {"app": "t", "tier": "a"}}},
    }
    apply(
        shared_server,
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta, "spec": rs_spec},
        {"replicas": 3, "readyReplicas": 1},
    )
    wide = table(shared_server, "-n", ns, "deployments", "-o", "wide")
    assert wide[0] == [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert wide[1][:4] == ["d", "2/3", "3", "2"]
    assert wide[1][5:] == ["web,side", "nginx:1.25,busybox", "app=t"]
    wide = table(shared_server, "-n", ns, "replicasets", "-o", "wide")
    assert wide[0] == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert wide[1][:4] == ["d", "3", "3", "1"]
    assert wide[1][5:] == ["web,side", "nginx:1.25,busybox", "app=t,tier in (a,b)"]


@pytest.mark.kubectl
@needs_kubectl
def test_jobs_and_cronjobs(shared_server: SharedServer, ns: str) -> None:
    template = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}
    apply(
        shared_server,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": ns},
            "spec": {"completions": 2, "template": template},
        },
        {
            "succeeded": 2,
            "startTime": ts(100),
            "completionTime": ts(40),
            "conditions": [{"type": "Complete", "status": "True"}],
        },
    )
    apply(
        shared_server,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "k", "namespace": ns},
            "spec": {"parallelism": 3, "template": template},
        },
    )
    rows = table(shared_server, "-n", ns, "jobs")
    assert rows[0] == ["NAME", "COMPLETIONS", "DURATION", "AGE"]  # 1.24: no STATUS column
    by_name = {r[0]: r for r in rows[1:]}
    assert by_name["j"][1:3] == ["2/2", "60s"]
    assert by_name["k"][1:2] == ["0/1 of 3"]
    wide = table(shared_server, "-n", ns, "jobs", "j", "-o", "wide")
    assert wide[0][4:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1][4:6] == ["web,side", "nginx:1.25,busybox"]
    assert "controller-uid=" in wide[1][6] or wide[1][6] == "<none>"

    apply(
        shared_server,
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "c", "namespace": ns},
            "spec": {
                "schedule": "*/5 * * * *",
                "timeZone": "Etc/UTC",
                "suspend": False,
                "jobTemplate": {"spec": {"template": template}},
            },
        },
        {"lastScheduleTime": ts(180), "active": [{"kind": "Job", "name": "k", "namespace": ns}]},
    )
    wide = table(shared_server, "-n", ns, "cronjobs", "-o", "wide")
    assert wide[0] == [  # 1.24: no TIMEZONE column
        "NAME",
        "SCHEDULE",
        "SUSPEND",
        "ACTIVE",
        "LAST SCHEDULE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert wide[1][:5] == ["c", "*/5 * * * *", "False", "1", "3m"]
    assert wide[1][6:] == ["web,side", "nginx:1.25,busybox", "<none>"]


@pytest.mark.kubectl
@needs_kubectl
def test_ages_follow_the_server_clock(shared_server: SharedServer, ns: str) -> None:
    """AGE and LAST SCHEDULE are measured to the server's clock, not the machine's."""
    apply(
        shared_server,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "aged", "namespace": ns}},
    )
    assert table(shared_server, "-n", ns, "configmaps", "aged")[1] == ["aged", "0", "0s"]
    SERVER_CLOCK.set_wall_offset(2 * 3600 + 30)
    try:
        assert table(shared_server, "-n", ns, "configmaps", "aged")[1] == ["aged", "0", "120m"]
    finally:
        SERVER_CLOCK.set_wall_offset(0)
