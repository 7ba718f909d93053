"""Which verbs each resource serves, and what an unserved one answers (405 vs 404)."""

from __future__ import annotations

from ..scenario import Http, Scenario, Watch

CM = {"metadata": {"name": "a"}, "data": {"k": "v"}}
CORE = "/api/v1/namespaces/$ns"
APPS = "/apis/apps/v1/namespaces/$ns"
LABELS = {"app": "web"}
CONTAINERS = [{"name": "c", "image": "busybox"}]
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": CONTAINERS}}
POD = {"metadata": {"name": "p"}, "spec": {"containers": CONTAINERS}}
DEPLOY = {
    "metadata": {"name": "d"},
    "spec": {"replicas": 1, "selector": {"matchLabels": LABELS}, "template": TEMPLATE},
}
RS = {
    "metadata": {"name": "rs"},
    "spec": {"replicas": 1, "selector": {"matchLabels": LABELS}, "template": TEMPLATE},
}
STS = {
    "metadata": {"name": "s"},
    "spec": {
        "replicas": 1,
        "serviceName": "s",
        "selector": {"matchLabels": LABELS},
        "template": TEMPLATE,
    },
}
RC = {"metadata": {"name": "rc"}, "spec": {"replicas": 1, "selector": LABELS, "template": TEMPLATE}}
SCALE_KEEP = ("kind", "apiVersion", "metadata.name", "spec", "status")
BINDING = {
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "p"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"},
}
EVICTION = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
TOKEN_REQUEST = {
    "apiVersion": "authentication.k8s.io/v1",
    "kind": "TokenRequest",
    "spec": {"audiences": ["api"], "expirationSeconds": 3600},
}


def _cm(name: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"metadata": meta, "data": {"k": "v"}}


def _scale(plural: str, body: dict[str, object], group: str = APPS) -> tuple[Scenario, ...]:
    """GET, PUT and PATCH of ``plural``'s scale subresource."""
    name = body["metadata"]["name"]  # type: ignore[index]
    path = f"{group}/{plural}/{name}"
    return (
        Scenario(
            f"verbs/{plural}-scale-get",
            (Http("POST", f"{group}/{plural}", body, keep=("kind",)), Http("GET", f"{path}/scale")),
            f"GET {plural}/NAME/scale: an autoscaling/v1 Scale with the selector as a string",
        ),
        Scenario(
            f"verbs/{plural}-scale-put",
            (
                Http("POST", f"{group}/{plural}", body, keep=("kind",)),
                Http(
                    "PUT",
                    f"{path}/scale",
                    {
                        "apiVersion": "autoscaling/v1",
                        "kind": "Scale",
                        "metadata": {"name": name, "namespace": "$ns"},
                        "spec": {"replicas": 3},
                    },
                    keep=SCALE_KEEP,
                ),
                Http("GET", path, keep=("spec.replicas", "metadata.generation")),
            ),
            f"PUT {plural}/NAME/scale sets spec.replicas of the object",
        ),
        Scenario(
            f"verbs/{plural}-scale-patch",
            (
                Http("POST", f"{group}/{plural}", body, keep=("kind",)),
                Http(
                    "PATCH",
                    f"{path}/scale",
                    {"spec": {"replicas": 2}},
                    content_type="merge",
                    keep=SCALE_KEEP,
                ),
                Http("GET", path, keep=("spec.replicas",)),
            ),
            f"a merge PATCH of {plural}/NAME/scale sets spec.replicas of the object",
        ),
    )


SCENARIOS = [
    Scenario(
        "verbs/deletecollection-namespaces-405",
        (
            Http("DELETE", "/api/v1/namespaces"),
            Http("GET", "/api/v1/namespaces/kube-system", keep=("status.phase",)),
        ),
        "namespaces do not allow deletecollection: 405, and nothing is deleted",
        namespace=False,
    ),
    Scenario(
        "verbs/get-missing-404",
        (Http("GET", "/api/v1/namespaces/$ns/configmaps/nope"),),
        "a missing object: 404 NotFound with details",
    ),
    Scenario(
        "verbs/unknown-resource-404",
        (Http("GET", "/api/v1/namespaces/$ns/nosuchthings"),),
        "an unknown resource: 404 with an empty Status",
    ),
    Scenario(
        "verbs/watch-True-is-a-watch",
        (
            Http(
                "POST",
                "/api/v1/namespaces/$ns/configmaps",
                CM,
                save={"rv": "metadata.resourceVersion"},
            ),
            Watch(
                "/api/v1/namespaces/$ns/configmaps",
                {"watch": "True", "resourceVersion": "0"},
                keep=("metadata.name", "data"),
            ),
        ),
        "watch=True (the official Python client sends it) opens a watch",
    ),
    Scenario(
        "verbs/post-to-named-path-405",
        (Http("POST", "/api/v1/namespaces/$ns/configmaps/a", CM),),
        "POST to an object's path: 405",
    ),
    # -- deletecollection ----------------------------------------------------------------------
    Scenario(
        "verbs/deletecollection-configmaps-by-label",
        (
            Http("POST", f"{CORE}/configmaps", _cm("a", {"x": "1"}), keep=("kind",)),
            Http("POST", f"{CORE}/configmaps", _cm("b", {"x": "1"}), keep=("kind",)),
            Http("POST", f"{CORE}/configmaps", _cm("c"), keep=("kind",)),
            Http(
                "DELETE",
                f"{CORE}/configmaps",
                query={"labelSelector": "x=1"},
                keep=("kind", "apiVersion", "items.0.metadata.name", "items.1.metadata.name"),
            ),
            Http(
                "GET",
                f"{CORE}/configmaps",
                query={"labelSelector": "x"},
                keep=("kind", "items"),
            ),
            Http("GET", f"{CORE}/configmaps/c", keep=("metadata.name",)),
        ),
        "DELETE on a collection deletes what the selector picks and answers with the list",
    ),
    Scenario(
        "verbs/deletecollection-cluster-scoped-allowed",
        (
            Http(
                "DELETE",
                "/api/v1/persistentvolumes",
                query={"labelSelector": "cf=verbs-deletecollection-cluster-scoped"},
            ),
        ),
        "deletecollection on a cluster-scoped resource other than namespaces: 200, an empty list",
        namespace=False,
    ),
    # -- status subresource ----------------------------------------------------------------------
    Scenario(
        "verbs/pods-status-get",
        (
            Http("POST", f"{CORE}/pods", POD, keep=("kind",)),
            Http("GET", f"{CORE}/pods/p/status", keep=("kind", "metadata.name", "status.phase")),
        ),
        "GET pods/NAME/status: the whole Pod",
    ),
    Scenario(
        "verbs/pods-status-patch-ignores-spec",
        (
            Http("POST", f"{CORE}/pods", POD, keep=("kind",)),
            Http(
                "PATCH",
                f"{CORE}/pods/p/status",
                {"metadata": {"labels": {"l": "1"}}, "status": {"phase": "Running"}},
                content_type="merge",
                keep=("kind", "metadata.labels", "status.phase"),
            ),
            Http(
                "PATCH",
                f"{CORE}/pods/p/status",
                {"spec": {"activeDeadlineSeconds": 5}, "status": {"message": "hi"}},
                content_type="merge",
                keep=("spec.activeDeadlineSeconds", "status.message", "status.phase"),
            ),
        ),
        "a status PATCH changes status and labels but not spec",
    ),
    Scenario(
        "verbs/pods-status-put",
        (
            Http(
                "POST",
                f"{CORE}/pods",
                POD,
                keep=("kind",),
                save={"rv": "metadata.resourceVersion"},
            ),
            Http(
                "PUT",
                f"{CORE}/pods/p/status",
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p", "resourceVersion": "$rv"},
                    "spec": {"containers": CONTAINERS, "nodeName": "ignored"},
                    "status": {"phase": "Succeeded"},
                },
                keep=("spec.nodeName", "status.phase"),
            ),
        ),
        "PUT pods/NAME/status writes status only; spec in the body is ignored",
    ),
    Scenario(
        "verbs/configmaps-status-404",
        (
            Http("POST", f"{CORE}/configmaps", CM, keep=("kind",)),
            Http("GET", f"{CORE}/configmaps/a/status"),
        ),
        "a resource without a status subresource: GET NAME/status is a 404",
    ),
    Scenario(
        "verbs/deployments-status-put-missing-404",
        (
            Http(
                "PUT",
                f"{APPS}/deployments/nope/status",
                {**DEPLOY, "metadata": {"name": "nope"}},
            ),
        ),
        "PUT deployments/NAME/status of a missing object: 404, not a create",
    ),
    # -- scale subresource -----------------------------------------------------------------------
    *_scale("deployments", DEPLOY),
    Scenario(
        "verbs/replicasets-scale-get",
        (
            Http("POST", f"{APPS}/replicasets", RS, keep=("kind",)),
            Http("GET", f"{APPS}/replicasets/rs/scale"),
        ),
        "GET replicasets/NAME/scale",
    ),
    Scenario(
        "verbs/deployments-scale-put-without-namespace-422",
        (
            Http("POST", f"{APPS}/deployments", DEPLOY, keep=("kind",)),
            Http(
                "PUT",
                f"{APPS}/deployments/d/scale",
                {
                    "apiVersion": "autoscaling/v1",
                    "kind": "Scale",
                    "metadata": {"name": "d"},
                    "spec": {"replicas": 3},
                },
            ),
        ),
        "a Scale PUT must name its namespace in the body (the path does not fill it in): 422",
    ),
    Scenario(
        "verbs/statefulsets-scale-get",
        (
            Http("POST", f"{APPS}/statefulsets", STS, keep=("kind",)),
            Http("GET", f"{APPS}/statefulsets/s/scale"),
        ),
        "GET statefulsets/NAME/scale",
    ),
    Scenario(
        "verbs/replicationcontrollers-scale-get",
        (
            Http("POST", f"{CORE}/replicationcontrollers", RC, keep=("kind",)),
            Http("GET", f"{CORE}/replicationcontrollers/rc/scale"),
        ),
        "GET replicationcontrollers/NAME/scale: the selector is the map as a string",
    ),
    Scenario(
        "verbs/replicationcontrollers-scale-patch",
        (
            Http("POST", f"{CORE}/replicationcontrollers", RC, keep=("kind",)),
            Http(
                "PATCH",
                f"{CORE}/replicationcontrollers/rc/scale",
                {"spec": {"replicas": 4}},
                content_type="merge",
                keep=SCALE_KEEP,
            ),
        ),
        "PATCH replicationcontrollers/NAME/scale",
    ),
    Scenario(
        "verbs/scale-missing-object-404",
        (Http("GET", f"{APPS}/deployments/nope/scale"),),
        "the scale of a missing object: 404 naming the parent resource",
    ),
    Scenario(
        "verbs/scale-on-daemonsets-404",
        (Http("GET", f"{APPS}/daemonsets/x/scale"),),
        "daemonsets have no scale subresource: 404",
    ),
    # -- pods/binding, pods/eviction, serviceaccounts/token ----------------------------------------
    Scenario(
        "verbs/pods-binding-post",
        (
            Http("POST", f"{CORE}/pods", POD, keep=("kind",)),
            Http("POST", f"{CORE}/pods/p/binding", BINDING),
            Http("GET", f"{CORE}/pods/p", keep=("spec.nodeName", "status.conditions")),
        ),
        "POST pods/NAME/binding: 201 with a Success Status; the pod gets spec.nodeName",
    ),
    Scenario(
        "verbs/pods-binding-twice-409",
        (
            Http("POST", f"{CORE}/pods", POD, keep=("kind",)),
            Http("POST", f"{CORE}/pods/p/binding", BINDING, keep=("status",)),
            Http("POST", f"{CORE}/pods/p/binding", BINDING),
        ),
        "binding a pod that already has a node: 409 Conflict",
    ),
    Scenario(
        "verbs/pods-binding-get-405",
        (
            Http("POST", f"{CORE}/pods", POD, keep=("kind",)),
            Http("GET", f"{CORE}/pods/p/binding"),
        ),
        "binding is create-only: GET on it is 405",
    ),
    Scenario(
        "verbs/bindings-collection-post",
        (
            Http("POST", f"{CORE}/pods", POD, keep=("kind",)),
            Http("POST", f"{CORE}/bindings", BINDING),
            Http("GET", f"{CORE}/pods/p", keep=("spec.nodeName",)),
        ),
        "the old bindings collection: POST binds the pod named in the body",
    ),
    Scenario(
        "verbs/pods-eviction-post",
        (
            Http("POST", f"{CORE}/pods", POD, keep=("kind",)),
            Http("POST", f"{CORE}/pods/p/eviction", EVICTION),
            Http("GET", f"{CORE}/pods/p"),
        ),
        "POST pods/NAME/eviction of an unscheduled pod: 201 Success, the pod is gone",
    ),
    Scenario(
        "verbs/pods-eviction-missing-404",
        (Http("POST", f"{CORE}/pods/nope/eviction", {**EVICTION, "metadata": {"name": "nope"}}),),
        "evicting a missing pod: 404",
    ),
    Scenario(
        "verbs/serviceaccounts-token-post",
        (
            Http(
                "POST",
                f"{CORE}/serviceaccounts/default/token",
                TOKEN_REQUEST,
                keep=("kind", "apiVersion", "metadata", "spec", "status.expirationTimestamp"),
            ),
        ),
        "POST serviceaccounts/NAME/token: 201 TokenRequest with a token",
    ),
    Scenario(
        "verbs/serviceaccounts-token-missing-404",
        (Http("POST", f"{CORE}/serviceaccounts/nope/token", TOKEN_REQUEST),),
        "a token for a missing ServiceAccount: 404",
    ),
    Scenario(
        "verbs/serviceaccounts-token-get-405",
        (Http("GET", f"{CORE}/serviceaccounts/default/token"),),
        "token is create-only: GET on it is 405",
    ),
    # -- 404 versus 405 --------------------------------------------------------------------------
    Scenario(
        "verbs/unknown-subresource-404",
        (
            Http("POST", f"{CORE}/configmaps", CM, keep=("kind",)),
            Http("GET", f"{CORE}/configmaps/a/nosuch"),
        ),
        "an unknown subresource of an existing object: 404",
    ),
    Scenario(
        "verbs/put-to-collection-405",
        (Http("PUT", f"{CORE}/configmaps", CM),),
        "PUT to a collection: 405",
    ),
    Scenario(
        "verbs/patch-collection-405",
        (Http("PATCH", f"{CORE}/configmaps", {"data": {}}, content_type="merge"),),
        "PATCH to a collection: 405",
    ),
    Scenario(
        "verbs/unknown-group-404",
        (Http("GET", "/apis/nosuch.example.com/v1/namespaces/$ns/things"),),
        "a group the server does not serve: 404",
    ),
    Scenario(
        "verbs/cluster-scoped-under-namespace-404",
        (Http("GET", f"{CORE}/nodes"),),
        "a cluster-scoped resource under a namespace path: 404",
    ),
    Scenario(
        "verbs/namespaced-list-across-namespaces",
        (
            Http("POST", f"{CORE}/configmaps", _cm("a", {"cf": "across"}), keep=("kind",)),
            Http(
                "GET",
                "/api/v1/configmaps",
                query={"labelSelector": "cf=across"},
                keep=("kind", "items.0.metadata.namespace", "items.1"),
            ),
        ),
        "a namespaced resource without a namespace: the list spans every namespace",
    ),
    Scenario(
        "verbs/namespaced-create-without-namespace-405",
        (Http("POST", "/api/v1/configmaps", CM),),
        "POST to a namespaced resource's all-namespaces path: 405",
    ),
    Scenario(
        "verbs/namespaced-object-without-namespace-404",
        (Http("GET", "/api/v1/configmaps/a"),),
        "an object path without a namespace: 404",
    ),
    Scenario(
        "verbs/componentstatuses-delete-405",
        (Http("DELETE", "/api/v1/componentstatuses/etcd-0"),),
        "a read-only resource (componentstatuses): DELETE is 405",
        namespace=False,
    ),
]
