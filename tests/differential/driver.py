"""Run a scenario against a cluster whose controllers are running (the Go
kube-controller-manager on a real kube-apiserver when recording; kcm on the embedded server in
the tests) and return its snapshots.

Blocking httpx on purpose: the same code drives both sides.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from .scenario import (
    Bind,
    BindVolume,
    Create,
    CreateNode,
    Delete,
    DeleteNamespace,
    DeleteNode,
    Kubelet,
    Patch,
    PatchNode,
    Scenario,
    Settle,
    Step,
    StopNode,
    Until,
)
from .snapshot import (
    CLUSTER_KINDS,
    CLUSTER_RESOURCES,
    RESOURCES,
    SnapshotNormaliser,
    list_path,
    pinned_node,
)

__all__ = ["Target", "run_scenario"]

_MERGE = {"Content-Type": "application/merge-patch+json"}

IDLE_QUIET = 0.5
"""Seconds a snapshot must stay unchanged before a settle asks the controller manager whether
it is idle (informer events of the last write reach it well within that)."""


@dataclass(frozen=True)
class Target:
    """The cluster's API server; ``metrics_url``: the controller manager's ``/metrics`` when it
    can be read (kcm's), so a settle also waits until its work queues are empty and idle."""

    url: str
    token: str | None = None
    metrics_url: str | None = None

    def controllers_idle(self, within: float) -> bool | None:
        """Whether the controller manager is idle: nothing queued, nothing being worked on,
        no event unwritten, and no delayed key due within ``within`` seconds (kcm's
        ``/metrics``). None: it cannot tell (no metrics, or not kcm's)."""
        if self.metrics_url is None:
            return None
        try:
            response = httpx.get(self.metrics_url, timeout=5.0, verify=False)
        except httpx.HTTPError:
            return False  # the controller manager is gone: the settle runs to its deadline
        if response.status_code != 200:  # a settle that cannot see kcm's queues is a guess
            raise AssertionError(
                f"GET {self.metrics_url}: {response.status_code} {response.text[:200]}"
            )
        text = response.text
        busy, next_due, seen = 0.0, float("inf"), False
        for line in text.splitlines():
            if line.startswith(
                ("workqueue_depth{", "workqueue_unfinished_work_seconds{", "kcm_events_pending ")
            ):
                busy += float(line.rsplit(" ", 1)[1])
            elif line.startswith("kcm_workqueue_next_delayed_seconds{"):
                seen = True
                next_due = min(next_due, float(line.rsplit(" ", 1)[1]))
        if not seen:
            return None
        return busy == 0.0 and next_due > within

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.url, headers=headers, verify=False, timeout=30.0)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise AssertionError(
            f"{response.request.method} {response.request.url}: "
            f"{response.status_code} {response.text[:400]}"
        )
    return response.json()


def _in_namespace(body: Any, ns: str) -> Any:
    """``body`` with every ``"$ns"`` string the run's namespace (a PersistentVolume's
    ``claimRef`` names a claim in it)."""
    if isinstance(body, dict):
        return {k: _in_namespace(v, ns) for k, v in body.items()}
    if isinstance(body, list):
        return [_in_namespace(v, ns) for v in body]
    return ns if body == "$ns" else body


def _path_of(body: dict[str, Any], ns: str) -> str:
    api_version, kind = body["apiVersion"], body["kind"]
    if kind == "Node":
        return "/api/v1/nodes"
    if kind in CLUSTER_KINDS:
        return list_path(CLUSTER_KINDS[kind], ns)
    plural = next(
        (p for p in RESOURCES if p.rstrip("s") == kind.lower() or p == kind.lower() + "s"),
        None,
    )
    plural = plural or {"Endpoints": "endpoints", "EndpointSlice": "endpointslices"}.get(kind)
    assert plural, f"unknown kind {kind}: add it to snapshot.RESOURCES"
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    return f"{prefix}/namespaces/{ns}/{plural}"


def _pod_status(pod: dict[str, Any], step: Kubelet) -> dict[str, Any]:
    now = _now()
    containers = [c["name"] for c in pod["spec"]["containers"]]
    if step.phase == "Running":
        state: dict[str, Any] = {"running": {"startedAt": now}}
        ready = "True" if step.ready else "False"
    else:
        reason = "Completed" if step.phase == "Succeeded" else "Error"
        state = {
            "terminated": {
                "exitCode": step.exit_code,
                "reason": reason,
                "startedAt": now,
                "finishedAt": now,
            }
        }
        ready = "False"
    conditions = [
        {"type": t, "status": s, "lastTransitionTime": now}
        for t, s in (
            ("Initialized", "True"),
            ("Ready", ready),
            ("ContainersReady", ready),
            ("PodScheduled", "True"),
        )
    ]
    statuses = [
        {
            "name": name,
            "ready": ready == "True",
            "restartCount": 0,
            "image": "image",
            "imageID": "",
            "started": step.phase == "Running",
            "state": state,
        }
        for name in containers
    ]
    return {
        "status": {
            "phase": step.phase,
            "startTime": now,
            "conditions": conditions,
            "containerStatuses": statuses,
        }
    }


def _next_ip(client: httpx.Client, ns: str) -> str:
    pods = _check(client.get(list_path("pods", ns)))["items"]
    return f"10.1.0.{1 + sum(1 for p in pods if p.get('status', {}).get('podIP'))}"


def _kubelet(client: httpx.Client, ns: str, step: Kubelet) -> None:
    pods = _check(client.get(list_path("pods", ns), params={"labelSelector": step.selector}))
    live = [
        p
        for p in pods["items"]
        if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
        and not p["metadata"].get("deletionTimestamp")
    ]
    live.sort(key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))
    for pod in live[: step.count]:
        name = pod["metadata"]["name"]
        status = _pod_status(pod, step)
        if step.ips:
            ip = pod.get("status", {}).get("podIP") or _next_ip(client, ns)
            status["status"] |= {"podIP": ip, "podIPs": [{"ip": ip}]}
        client.patch(
            f"{list_path('pods', ns)}/{name}/status",
            content=json.dumps(status),
            headers=_MERGE,
        )


_LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
_LIFECYCLE_TAINTS = {"node.kubernetes.io/unschedulable"}


def _micro_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Nodes:
    """The scenario's Nodes and their kubelet: a Ready heartbeat, a Lease renewed every few
    seconds while the scenario runs (so the node lifecycle controller never finds them
    unreachable), deleted when it ends."""

    RENEW_EVERY = 5.0

    def __init__(self, client: httpx.Client) -> None:
        self._client = client
        self.names: list[str] = []
        self.stopped: set[str] = set()
        self._renewed = time.monotonic()

    def create(self, step: CreateNode) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": step.name, "labels": dict(step.labels)},
            "spec": {"taints": [dict(t) for t in step.taints], "unschedulable": step.unschedulable},
        }
        _check(self._client.post("/api/v1/nodes", json=body))
        self.names.append(step.name)
        now = _now()
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        _check(
            self._client.patch(
                f"/api/v1/nodes/{step.name}/status",
                content=json.dumps({"status": {"conditions": [ready]}}),
                headers=_MERGE,
            )
        )
        lease = {
            "metadata": {"name": step.name},
            "spec": {
                "holderIdentity": step.name,
                "leaseDurationSeconds": 40,
                "renewTime": _micro_now(),
            },
        }
        self._client.post(_LEASES, json=lease)  # best effort: only a lifecycle controller reads it
        self._wait_for_taints(step)

    def _wait_for_taints(self, step: CreateNode) -> None:
        want = sorted(json.dumps(t, sort_keys=True) for t in step.taints)
        deadline = time.monotonic() + 30
        while True:
            node = _check(self._client.get(f"/api/v1/nodes/{step.name}"))
            have = sorted(
                json.dumps({k: v for k, v in t.items() if k != "timeAdded"}, sort_keys=True)
                for t in node.get("spec", {}).get("taints") or ()
                if t.get("key") not in _LIFECYCLE_TAINTS
            )
            if have == want:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"node {step.name} has taints {have}, expected {want}")
            time.sleep(0.25)

    def renew_if_due(self) -> None:
        if not self.names or time.monotonic() - self._renewed < self.RENEW_EVERY:
            return
        self._renewed = time.monotonic()
        renewal = json.dumps({"spec": {"renewTime": _micro_now()}})
        for name in self.names:
            if name not in self.stopped:
                self._client.patch(f"{_LEASES}/{name}", content=renewal, headers=_MERGE)

    def delete_all(self, ns: str) -> None:
        """Delete the scenario's DaemonSets first (waiting until they are gone), so they do not
        also run on the next scenario's nodes and slow its controller down, then the nodes."""
        if not self.names:
            return
        daemon_sets = list_path("daemonsets", ns)
        self._client.delete(daemon_sets)
        deadline = time.monotonic() + 30
        while self._client.get(daemon_sets).json().get("items") and time.monotonic() < deadline:
            time.sleep(0.25)
        for name in self.names:
            self._client.delete(f"/api/v1/nodes/{name}")
            self._client.delete(f"{_LEASES}/{name}")
        self.names.clear()


def _bind(client: httpx.Client, ns: str, step: Bind) -> None:
    pods = _check(client.get(list_path("pods", ns), params={"labelSelector": step.selector}))
    for pod in pods["items"]:
        if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            continue
        node = pinned_node(pod)
        assert node, f"pod {pod['metadata']['name']} is pinned to no node"
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod["metadata"]["name"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        _check(
            client.post(f"{list_path('pods', ns)}/{pod['metadata']['name']}/binding", json=binding)
        )


def _bind_volume(client: httpx.Client, ns: str, step: BindVolume) -> None:
    claim_path = f"{list_path('persistentvolumeclaims', ns)}/{step.claim}"
    volume_path = f"{list_path('persistentvolumes', ns)}/{step.volume}"
    claim = _check(client.get(claim_path))
    volume = _check(client.get(volume_path))
    ref = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": ns,
        "name": step.claim,
        "uid": claim["metadata"]["uid"],
    }
    patches = (
        (claim_path, {"metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}}}),
        (volume_path, {"spec": {"claimRef": ref}}),
        (f"{volume_path}/status", {"status": {"phase": "Bound"}}),
        (
            f"{claim_path}/status",
            {
                "status": {
                    "phase": "Bound",
                    "capacity": volume["spec"]["capacity"],
                    "accessModes": volume["spec"]["accessModes"],
                }
            },
        ),
    )
    for path, body in patches:
        _check(client.patch(path, content=json.dumps(body), headers=_MERGE))


def _list(
    client: httpx.Client,
    ns: str,
    kinds: tuple[str, ...],
    cluster_names: frozenset[str] = frozenset(),
) -> dict[str, list[Any]]:
    listed: dict[str, list[Any]] = {}
    for kind in kinds:
        if kind == "namespace":  # the scenario's namespace itself, or nothing once it is gone
            response = client.get(f"/api/v1/namespaces/{ns}")
            listed[kind] = [_check(response)] if response.status_code != 404 else []
        elif kind == "volumeattachments":  # those of the volumes the scenario created
            items = _check(client.get(list_path(kind, ns)))["items"]
            listed[kind] = [
                o
                for o in items
                if ((o.get("spec") or {}).get("source") or {}).get("persistentVolumeName")
                in cluster_names
            ]
        elif kind in CLUSTER_RESOURCES:  # only what the scenario created
            items = _check(client.get(list_path(kind, ns)))["items"]
            listed[kind] = [o for o in items if o["metadata"]["name"] in cluster_names]
        else:
            listed[kind] = _check(client.get(list_path(kind, ns)))["items"]
    return listed


def _cluster_objects(scenario: Scenario) -> list[tuple[str, str]]:
    """(plural, name) of the cluster-scoped objects (other than nodes) the scenario creates."""
    found = []
    for step in scenario.steps:
        if isinstance(step, Create) and step.body["kind"] in CLUSTER_KINDS:
            found.append((CLUSTER_KINDS[step.body["kind"]], step.body["metadata"]["name"]))
    return found


def _settle(
    target: Target,
    client: httpx.Client,
    ns: str,
    scenario: Scenario,
    step: Settle,
    norm: SnapshotNormaliser,
    nodes: _Nodes,
) -> dict[str, Any]:
    deadline = time.monotonic() + step.timeout
    quiet = step.quiet  # kcm's window, when the scenario gives one (Settle.replay_quiet)
    if target.metrics_url is not None and step.replay_quiet is not None:
        quiet = step.replay_quiet
    last: str | None = None
    stable_since = time.monotonic()
    while True:
        nodes.renew_if_due()
        names = frozenset(name for _, name in _cluster_objects(scenario))
        snapshot = norm.snapshot(_list(client, ns, scenario.kinds, names))
        text = json.dumps(snapshot, sort_keys=True)
        now = time.monotonic()
        if text != last:
            last, stable_since = text, now
        elif now > deadline:
            return snapshot
        elif now - stable_since >= IDLE_QUIET:
            # kcm says when it is done: idle, and no requeue due within the quiet window;
            # otherwise (or for a controller manager that cannot say) the window itself.
            idle = target.controllers_idle(within=quiet)
            # past the window, a delayed key (a requeue loop) no longer holds the snapshot
            past_window = idle is False and now - stable_since >= quiet
            done = bool(idle) or (idle is None and now - stable_since >= quiet)
            if done or (past_window and target.controllers_idle(within=0.0)):
                # what kcm finished writing just before it said so is in a fresh listing
                again = norm.snapshot(_list(client, ns, scenario.kinds, names))
                if json.dumps(again, sort_keys=True) == text:
                    return snapshot
                last, stable_since = json.dumps(again, sort_keys=True), time.monotonic()
        time.sleep(0.2)


def _run_step(
    target: Target,
    client: httpx.Client,
    ns: str,
    scenario: Scenario,
    step: Step,
    norm: SnapshotNormaliser,
    nodes: _Nodes,
) -> dict[str, Any] | None:
    nodes.renew_if_due()
    if isinstance(step, Create):
        response = client.post(_path_of(step.body, ns), json=_in_namespace(step.body, ns))
        if not (step.body["kind"] == "Node" and response.status_code == 409):
            _check(response)
    elif isinstance(step, Patch):
        path = f"{list_path(step.resource, ns)}/{step.name}"
        if step.subresource:
            path += f"/{step.subresource}"
        _check(client.patch(path, content=json.dumps(step.body), headers=_MERGE))
    elif isinstance(step, Delete):
        options: dict[str, Any] = (
            {"propagationPolicy": step.propagation} if step.propagation else {}
        )
        if step.grace_period_seconds is not None:
            options["gracePeriodSeconds"] = step.grace_period_seconds
        path = f"{list_path(step.resource, ns)}/{step.name}"
        _check(client.request("DELETE", path, json=options))
    elif isinstance(step, Kubelet):
        _kubelet(client, ns, step)
    elif isinstance(step, Until):
        deadline = time.monotonic() + step.timeout
        while time.monotonic() < deadline:
            held = len(_check(client.get(list_path(step.resource, ns)))["items"])
            if (held <= step.count) if step.at_most else (held >= step.count):
                break
            nodes.renew_if_due()
            time.sleep(0.5)
    elif isinstance(step, DeleteNamespace):
        _check(client.delete(f"/api/v1/namespaces/{ns}"))
    elif isinstance(step, CreateNode):
        nodes.create(step)
    elif isinstance(step, PatchNode):
        path = f"/api/v1/nodes/{step.name}"
        _check(client.patch(path, content=json.dumps(step.body), headers=_MERGE))
    elif isinstance(step, DeleteNode):
        _check(client.delete(f"/api/v1/nodes/{step.name}"))
    elif isinstance(step, StopNode):
        nodes.stopped.add(step.name)
    elif isinstance(step, Bind):
        _bind(client, ns, step)
    elif isinstance(step, BindVolume):
        _bind_volume(client, ns, step)
    else:
        return _settle(target, client, ns, scenario, step, norm, nodes)
    return None


def _wait_for_default_service_account(client: httpx.Client, ns: str) -> None:
    """Pods can be created only once the namespace has its ``default`` ServiceAccount (on a
    real server, its admission refuses them before); the serviceaccount controller makes it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if client.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default").status_code == 200:
            return
        time.sleep(0.2)


def run_scenario(target: Target, scenario: Scenario, suffix: str = "") -> list[dict[str, Any]]:
    """Run ``scenario``'s steps against ``target`` in namespace ``scenario.ns + suffix`` (a
    suffix lets one cluster run a scenario twice); one snapshot per :class:`Settle`."""
    snapshots: list[dict[str, Any]] = []
    ns = scenario.ns[: 63 - len(suffix)] + suffix
    norm = SnapshotNormaliser(namespace=ns, pod_nodes=bool(scenario.extra.get("pod_nodes")))
    with target.client() as client:
        client.post("/api/v1/namespaces", json={"metadata": {"name": ns}})
        _wait_for_default_service_account(client, ns)
        nodes = _Nodes(client)
        try:
            for step in scenario.steps:
                snapshot = _run_step(target, client, ns, scenario, step, norm, nodes)
                if snapshot is not None:
                    snapshots.append(snapshot)
        finally:
            nodes.delete_all(ns)
            created = frozenset(name for _, name in _cluster_objects(scenario))
            if created:  # the attachments of its volumes (an attach may still be in flight)
                found = _list(client, ns, ("volumeattachments",), created)["volumeattachments"]
                for attachment in found:
                    name = attachment["metadata"]["name"]
                    client.delete(f"{list_path('volumeattachments', ns)}/{name}")
            for plural, name in _cluster_objects(scenario):
                path = f"{list_path(plural, ns)}/{name}"
                if plural == "persistentvolumes":  # still Bound: pv-protection would hold it
                    unprotect = {"metadata": {"finalizers": None}}
                    client.patch(path, content=json.dumps(unprotect), headers=_MERGE)
                client.delete(path)
    return snapshots
