"""Pod logs, exec, attach and port-forward where no kubelet runs: the errors the API server gives
(the real server has no nodes, so pods never run)."""

from __future__ import annotations

from typing import Any

from ..scenario import Http, Kubectl, Scenario

PODS = "/api/v1/namespaces/$ns/pods"


def pod(name: str = "p", containers: tuple[str, ...] = ("c",), **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers], **spec},
    }


CREATE = Http("POST", PODS, pod(), keep=("metadata.name", "spec.nodeName"))
SPDY = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}


def _node(scenario_id: str, status: dict[str, Any]) -> tuple[str, Http]:
    """A node named after the scenario (nodes are cluster-scoped), created with ``status``
    (a node keeps the status it is created with)."""
    name = "cf-" + "".join(c if c.isalnum() else "-" for c in scenario_id.lower())
    body = {"metadata": {"name": name}, "status": status}
    return name, Http("POST", "/api/v1/nodes", body, keep=("metadata.name",))


_BARE, _BARE_NODE = _node("logs/node-without-addresses", {})
_CLOSED, _CLOSED_NODE = _node(
    "logs/kubelet-not-listening",
    {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 1}},
    },
)

SCENARIOS = [
    Scenario(
        "logs/unscheduled-pod-no-content",
        (CREATE, Http("GET", f"{PODS}/p/log")),
        "GET pods/NAME/log on a pod without a node: 204 No Content, an empty body",
    ),
    Scenario(
        "logs/missing-pod-404",
        (Http("GET", f"{PODS}/nope/log"),),
        "GET pods/NAME/log on a missing pod: 404",
    ),
    Scenario(
        "logs/unknown-container-400",
        (CREATE, Http("GET", f"{PODS}/p/log", query={"container": "nope"})),
        "?container= naming no container of the pod: 400",
    ),
    Scenario(
        "logs/two-containers-need-a-name",
        (
            Http("POST", PODS, pod("p", ("a", "b")), keep=("metadata.name",)),
            Http("GET", f"{PODS}/p/log"),
        ),
        "a pod with two containers and no ?container=: 400 listing the choices",
    ),
    Scenario(
        "logs/invalid-options-422",
        (
            CREATE,
            Http("GET", f"{PODS}/p/log", query={"tailLines": "-1"}),
            Http("GET", f"{PODS}/p/log", query={"sinceSeconds": "0"}),
        ),
        "invalid log options (negative tailLines, sinceSeconds 0): 422",
    ),
    Scenario(
        "logs/node-assigned-but-missing",
        (
            Http("POST", PODS, pod(nodeName="ghost"), keep=("spec.nodeName",)),
            Http("GET", f"{PODS}/p/log"),
        ),
        "a pod bound to a node that does not exist: 404 (naming the node as a pod)",
    ),
    Scenario(
        "logs/kubectl-logs-unscheduled",
        (CREATE, Kubectl(("logs", "p", "-n", "$ns"))),
        "kubectl logs on a pod without a node: nothing, exit 0",
    ),
    Scenario(
        "logs/kubectl-logs-missing-pod",
        (Kubectl(("logs", "nope", "-n", "$ns")),),
        "kubectl logs on a missing pod: NotFound text",
    ),
    Scenario(
        "logs/exec-without-upgrade",
        (
            CREATE,
            Http("POST", f"{PODS}/p/exec", query={"command": "ls", "stdout": "true"}),
            Http("GET", f"{PODS}/p/exec", query={"command": "ls", "stdout": "true"}),
        ),
        "pods/NAME/exec without a websocket/SPDY upgrade on an unscheduled pod",
    ),
    Scenario(
        "logs/exec-missing-pod",
        (Http("POST", f"{PODS}/nope/exec", query={"command": "ls", "stdout": "true"}),),
        "pods/NAME/exec on a missing pod: 404",
    ),
    Scenario(
        "logs/attach-without-upgrade",
        (CREATE, Http("POST", f"{PODS}/p/attach", query={"stdout": "true"})),
        "pods/NAME/attach without an upgrade on an unscheduled pod",
    ),
    Scenario(
        "logs/portforward-without-upgrade",
        (CREATE, Http("POST", f"{PODS}/p/portforward", query={"ports": "80"})),
        "pods/NAME/portforward without an upgrade on an unscheduled pod",
    ),
    Scenario(
        "logs/options-that-do-not-convert-400",
        (
            Http("GET", f"{PODS}/nope/log", query={"tailLines": "abc"}),
            Http("GET", f"{PODS}/nope/log", query={"sinceTime": "yesterday"}),
            Http("GET", f"{PODS}/nope/log", query={"sinceTime": "2001-02-03 04:05:06Z"}),
            Http("POST", f"{PODS}/nope/portforward", query={"ports": "80,http"}),
        ),
        "log options and ports that do not parse: 400 with Go's parse errors, before the pod "
        "is looked up",
    ),
    Scenario(
        "logs/several-invalid-options-422",
        (
            Http(
                "GET",
                f"{PODS}/nope/log",
                query={"limitBytes": "0", "sinceSeconds": "5", "sinceTime": "2001-02-03T04:05:06Z"},
            ),
        ),
        "several invalid PodLogOptions: one 422 with every cause, before the pod is looked up",
    ),
    Scenario(
        "logs/node-without-addresses",
        (
            _BARE_NODE,
            Http("POST", PODS, pod(nodeName=_BARE), keep=("spec.nodeName",)),
            Http("GET", f"{PODS}/p/log"),
            Http("POST", f"{PODS}/p/exec", query={"command": "ls", "stdout": "true"}),
        ),
        "a pod on a node that reports no address: 500, no preferred address for its kubelet",
    ),
    Scenario(
        "logs/kubelet-not-listening",
        (
            _CLOSED_NODE,
            Http("POST", PODS, pod(nodeName=_CLOSED), keep=("spec.nodeName",)),
            Http("GET", f"{PODS}/p/log", query={"tailLines": "3", "follow": "yes"}),
            Http("POST", f"{PODS}/p/exec", query={"command": "ls", "stdout": "true"}),
            Http("POST", f"{PODS}/p/exec", query={"command": "ls"}, headers=SPDY),
            Http("POST", f"{PODS}/p/portforward", query={"ports": "80"}, headers=SPDY),
        ),
        "a pod on a node whose kubelet accepts no connections: the log request's dial error "
        "(500); exec without an upgrade: 400 Upgrade request required; with one: 500",
    ),
    Scenario(
        "logs/kubectl-exec-unscheduled",
        (CREATE, Kubectl(("exec", "p", "-n", "$ns", "--", "ls"))),
        "kubectl exec on a pod without a node: the error text",
    ),
]
