"""Authorization (RBAC): kube-apiserver's 403 texts for a ServiceAccount without roles
(namespaced, named, cluster-scoped, another group, a subresource, watch, deletecollection, a
non-resource path, a resource that does not exist, impersonation) and what a Role and
RoleBinding grant (verbs, resourceNames).

Each scenario acts as a ServiceAccount ``robot`` of its namespace through a TokenRequest token.
RBAC objects reach kube-apiserver's authorizer through an informer, so a scenario that writes
them waits a second before using them."""

from __future__ import annotations

from ..scenario import Http, Scenario, Sleep

NS = "/api/v1/namespaces/$ns"
ROBOT = (
    Http("POST", f"{NS}/serviceaccounts", {"metadata": {"name": "robot"}}, keep=("metadata.name",)),
    Http(
        "POST",
        f"{NS}/serviceaccounts/robot/token",
        {"spec": {}},
        save={"token": "status.token"},
        keep=("kind",),
    ),
)
AS_ROBOT = {"Authorization": "Bearer $token"}


def as_robot(method: str, path: str, body: object = None, **kw: object) -> Http:
    headers = {**AS_ROBOT, **kw.pop("headers", {})}  # type: ignore[dict-item]
    return Http(method, path, body, headers=headers, **kw)  # type: ignore[arg-type]


def role(rules: list[dict[str, object]]) -> tuple[Http, Http, Sleep]:
    """A Role ``robot`` with ``rules``, bound to the ServiceAccount, then a second's wait."""
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/$ns"
    binding = {
        "metadata": {"name": "robot"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "robot"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "$ns"}],
    }
    return (
        Http(
            "POST",
            f"{rbac}/roles",
            {"metadata": {"name": "robot"}, "rules": rules},
            keep=("metadata.name",),
        ),
        Http("POST", f"{rbac}/rolebindings", binding, keep=("metadata.name",)),
        Sleep(1),
    )


def forbidden(sid: str, doc: str, *steps: Http) -> Scenario:
    return Scenario(f"authz/{sid}", (*ROBOT, *steps), doc)


SCENARIOS = [
    forbidden(
        "list-namespaced-403",
        'list pods in a namespace: \'pods is forbidden: User ... cannot list resource "pods" in '
        'API group "" in the namespace ...\'',
        as_robot("GET", f"{NS}/pods"),
    ),
    forbidden(
        "get-named-403",
        "get one pod: the name in the message and the details",
        as_robot("GET", f"{NS}/pods/p"),
    ),
    forbidden(
        "cluster-scoped-403",
        "list nodes: '... at the cluster scope'",
        as_robot("GET", "/api/v1/nodes"),
    ),
    forbidden(
        "other-group-403",
        "create a deployment: 'deployments.apps is forbidden', group in the details",
        as_robot(
            "POST",
            "/apis/apps/v1/namespaces/$ns/deployments",
            {"metadata": {"name": "d"}},
        ),
    ),
    forbidden(
        "subresource-403",
        'a pod\'s log: resource "pods/log" in the message, kind pods in the details',
        as_robot("GET", f"{NS}/pods/p/log"),
    ),
    forbidden(
        "watch-403",
        "?watch=1 asks for the watch verb; /watch/ paths too",
        as_robot("GET", f"{NS}/configmaps", query={"watch": "1"}),
        as_robot("GET", "/api/v1/watch/namespaces/$ns/configmaps/c"),
    ),
    forbidden(
        "field-selector-name-403",
        "a list whose field selector requires one metadata.name asks for that name",
        as_robot("GET", f"{NS}/configmaps", query={"fieldSelector": "metadata.name=c"}),
    ),
    forbidden(
        "deletecollection-and-update-403",
        "DELETE on a collection is deletecollection; PUT update; PATCH patch",
        as_robot("DELETE", f"{NS}/configmaps"),
        as_robot("PUT", f"{NS}/configmaps/c", {"metadata": {"name": "c"}}),
        as_robot("PATCH", f"{NS}/configmaps/c", {"data": {}}, content_type="merge"),
    ),
    forbidden(
        "namespace-itself-403",
        "a namespace's path names its own namespace; its status is a subresource",
        as_robot("GET", "/api/v1/namespaces/$ns"),
        as_robot("GET", "/api/v1/namespaces/$ns/status"),
    ),
    forbidden(
        "unknown-resource-403",
        "authorization comes before routing: a resource that does not exist is 403, not 404",
        as_robot("GET", f"{NS}/nonsense"),
        as_robot("GET", "/apis/no.such.group/v1/things"),
    ),
    forbidden(
        "non-resource-path-403",
        "a path outside the APIs: 'forbidden: User ... cannot get path \"/metrics\"', "
        "empty details",
        as_robot("GET", "/metrics"),
    ),
    forbidden(
        "impersonate-403",
        'impersonating without the impersonate verb: \'users "jane" is forbidden: ... cannot '
        'impersonate resource "users"\'',
        as_robot("GET", f"{NS}/configmaps", headers={"Impersonate-User": "jane"}),
    ),
    Scenario(
        "authz/role-grants-verbs-and-names",
        (
            *ROBOT,
            Http("POST", f"{NS}/configmaps", {"metadata": {"name": "c"}}, keep=("metadata.name",)),
            Http("POST", f"{NS}/configmaps", {"metadata": {"name": "d"}}, keep=("metadata.name",)),
            *role(
                [
                    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]},
                    {
                        "apiGroups": [""],
                        "resources": ["configmaps"],
                        "resourceNames": ["c"],
                        "verbs": ["get", "delete"],
                    },
                ]
            ),
            as_robot("GET", f"{NS}/configmaps", keep=("kind",)),
            as_robot("GET", f"{NS}/configmaps/c", keep=("metadata.name",)),
            as_robot("GET", f"{NS}/configmaps/d"),
            as_robot("GET", f"{NS}/configmaps/missing"),
            as_robot("GET", f"{NS}/secrets"),
            as_robot("DELETE", f"{NS}/configmaps/c", keep=("metadata.name",)),
        ),
        "a Role bound to the account: list allowed, get and delete only the named object, "
        "anything else still 403",
    ),
    Scenario(
        "authz/bootstrap-policy",
        (
            Http(
                "GET",
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user",
                keep=("metadata.labels", "metadata.annotations", "rules"),
            ),
            Http(
                "GET",
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
                keep=("metadata.labels", "aggregationRule"),
            ),
            Http(
                "GET",
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:aggregate-to-view",
                keep=("metadata.labels", "rules"),
            ),
            Http(
                "GET",
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:discovery",
                keep=("roleRef", "subjects"),
            ),
            Http(
                "GET",
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/"
                "system:controller:replicaset-controller",
                keep=("roleRef", "subjects"),
            ),
            Http(
                "GET",
                "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/"
                "system::leader-locking-kube-controller-manager",
                keep=("roleRef", "subjects"),
            ),
        ),
        "the roles and bindings kube-apiserver creates on start",
        namespace=False,
    ),
    Scenario(
        "authz/authenticated-users-discover-and-review",
        (
            *ROBOT,
            as_robot("GET", "/api", keep=("kind",)),
            as_robot("GET", "/apis/apps/v1", keep=("kind", "groupVersion")),
            as_robot("GET", "/version", keep=("kind",)),
            as_robot(
                "POST",
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SelfSubjectAccessReview",
                    "spec": {
                        "resourceAttributes": {
                            "verb": "list",
                            "resource": "pods",
                            "namespace": "$ns",
                        }
                    },
                },
                keep=("status",),
            ),
        ),
        "every authenticated user may discover the APIs (system:discovery), read /version "
        "(system:public-info-viewer) and review its own access (system:basic-user)",
    ),
]
