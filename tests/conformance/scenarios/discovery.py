"""Discovery: /api, /apis, the per-group-version resource lists, /version and /openapi/v2.

A 1.24 kube-apiserver serves resources (and group versions) the embedded server may lack, so
most scenarios pick entries by name (``resources[name=pods/log]``) rather than whole lists.
"""

from __future__ import annotations

from ..scenario import Http, Scenario


def _entries(path: str, *names: str) -> Http:
    """GET a resource list and keep the named entries, whole."""
    return Http("GET", path, keep=tuple(f"resources[name={n}]" for n in names))


def _one(sid: str, path: str, names: tuple[str, ...], doc: str) -> Scenario:
    return Scenario(f"discovery/{sid}", (_entries(path, *names),), doc, namespace=False)


SCENARIOS = [
    Scenario(
        "discovery/api-versions",
        (
            Http(
                "GET",
                "/api",
                keep=("kind", "apiVersion", "versions", "serverAddressByClientCIDRs.0.clientCIDR"),
            ),
        ),
        "/api: APIVersions listing v1 (the server address is the listener's, not compared)",
        namespace=False,
    ),
    Scenario(
        "discovery/core-v1-header",
        (Http("GET", "/api/v1", keep=("kind", "apiVersion", "groupVersion")),),
        "/api/v1 is an APIResourceList for groupVersion v1",
        namespace=False,
    ),
    _one(
        "core-v1-pods",
        "/api/v1",
        ("pods",),
        "the pods entry: verbs, short names, the 'all' category, storageVersionHash",
    ),
    _one(
        "core-v1-pods-streaming-subresources",
        "/api/v1",
        ("pods/log", "pods/exec", "pods/attach", "pods/portforward", "pods/proxy"),
        "pods/log, exec, attach, portforward, proxy: their option kinds and verbs",
    ),
    _one(
        "core-v1-pods-write-subresources",
        "/api/v1",
        ("pods/status", "pods/binding", "pods/eviction", "pods/ephemeralcontainers"),
        "pods/status, binding (create), eviction (policy/v1 Eviction), ephemeralcontainers",
    ),
    _one(
        "core-v1-serviceaccounts-token",
        "/api/v1",
        ("serviceaccounts", "serviceaccounts/token"),
        "serviceaccounts/token: create-only, an authentication.k8s.io/v1 TokenRequest",
    ),
    _one(
        "core-v1-namespaces",
        "/api/v1",
        ("namespaces", "namespaces/status", "namespaces/finalize"),
        "namespaces: no deletecollection; finalize is update-only",
    ),
    _one(
        "core-v1-bindings-componentstatuses",
        "/api/v1",
        ("bindings", "componentstatuses"),
        "the odd ones: bindings is create-only, componentstatuses get/list",
    ),
    _one(
        "core-v1-replicationcontrollers",
        "/api/v1",
        ("replicationcontrollers", "replicationcontrollers/scale", "replicationcontrollers/status"),
        "replicationcontrollers/scale is an autoscaling/v1 Scale",
    ),
    _one(
        "core-v1-services-nodes",
        "/api/v1",
        ("services", "services/status", "services/proxy", "nodes", "nodes/status", "nodes/proxy"),
        "services and nodes with their status and proxy subresources",
    ),
    Scenario(
        "discovery/core-v1-short-names",
        (
            Http(
                "GET",
                "/api/v1",
                keep=tuple(
                    f"resources[name={n}].shortNames"
                    for n in (
                        "configmaps",
                        "endpoints",
                        "events",
                        "limitranges",
                        "persistentvolumeclaims",
                        "persistentvolumes",
                        "podtemplates",
                        "resourcequotas",
                        "secrets",
                    )
                ),
            ),
        ),
        "the core short names (and resources without any)",
        namespace=False,
    ),
    Scenario(
        "discovery/apis-groups",
        (
            Http(
                "GET",
                "/apis",
                keep=(
                    "kind",
                    "apiVersion",
                    "groups[name=apps]",
                    "groups[name=rbac.authorization.k8s.io]",
                    "groups[name=coordination.k8s.io].preferredVersion",
                    "groups[name=apiextensions.k8s.io]",
                    "groups[name=batch].preferredVersion",
                    "groups[name=policy].preferredVersion",
                    "groups[name=autoscaling].preferredVersion",
                    "groups[name=discovery.k8s.io].preferredVersion",
                    "groups[name=events.k8s.io].preferredVersion",
                ),
            ),
        ),
        "/apis: an APIGroupList; groups with one version whole, others' preferred version",
        namespace=False,
    ),
    Scenario(
        "discovery/apis-apps-group",
        (Http("GET", "/apis/apps"),),
        "/apis/apps: one APIGroup",
        namespace=False,
    ),
    _one(
        "apps-v1-deployments",
        "/apis/apps/v1",
        ("deployments", "deployments/scale", "deployments/status"),
        "deployments with scale (autoscaling/v1 Scale) and status",
    ),
    _one(
        "apps-v1-others",
        "/apis/apps/v1",
        (
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ),
        "the other apps/v1 resources: short names, categories, which have scale",
    ),
    _one(
        "batch-v1",
        "/apis/batch/v1",
        ("jobs", "jobs/status", "cronjobs", "cronjobs/status"),
        "batch/v1 jobs and cronjobs",
    ),
    Scenario(
        "discovery/rbac-v1-whole",
        (Http("GET", "/apis/rbac.authorization.k8s.io/v1"),),
        "rbac.authorization.k8s.io/v1: the whole list",
        namespace=False,
    ),
    Scenario(
        "discovery/coordination-v1-whole",
        (Http("GET", "/apis/coordination.k8s.io/v1"),),
        "coordination.k8s.io/v1: the whole list (leases)",
        namespace=False,
    ),
    Scenario(
        "discovery/apiextensions-v1-whole",
        (Http("GET", "/apis/apiextensions.k8s.io/v1"),),
        "apiextensions.k8s.io/v1: customresourcedefinitions and their status",
        namespace=False,
    ),
    Scenario(
        "discovery/policy-v1-whole",
        (Http("GET", "/apis/policy/v1"),),
        "policy/v1: poddisruptionbudgets and their status",
        namespace=False,
    ),
    Scenario(
        "discovery/version-keys",
        (Http("GET", "/version", keep=("keys()",)),),
        "/version: which keys it has (the values are the build's)",
        namespace=False,
    ),
    Scenario(
        "discovery/openapi-v2-exists",
        (
            Http(
                "GET",
                "/openapi/v2",
                headers={"Accept": "application/json"},
                keep=(),
                response_headers=("content-type",),
            ),
        ),
        "/openapi/v2 is served as JSON (status and content type only)",
        namespace=False,
    ),
    Scenario(
        "discovery/unknown-group-404",
        (Http("GET", "/apis/nosuch.example.com"),),
        "an unknown group's discovery document: 404",
        namespace=False,
    ),
    Scenario(
        "discovery/unknown-group-version-404",
        (Http("GET", "/apis/apps/v9"), Http("GET", "/api/v2")),
        "an unserved version of a known group, and /api/v2: 404",
        namespace=False,
    ),
]
