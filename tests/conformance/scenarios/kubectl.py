"""kubectl against the server: ``explain``, client-side validation, the ``create`` generators,
tokens, ``diff``, ``scale``, tables of the common kinds, ``auth can-i``, label/annotate/patch
flows, cascading deletes, ``wait`` and ``rollout`` on a bare server (no controllers).

Cluster-scoped objects are named after the scenario so that scenarios never collide, and are
listed by name (the embedded server is shared by every area's scenarios).
"""

from __future__ import annotations

from typing import Any

from ..scenario import Http, Kubectl, Scenario

NS = ("-n", "$ns")
JSON = ("-o", "json")
MANAGED = "--show-managed-fields"


def k(*args: str, stdin: str | None = None, keep: tuple[str, ...] | None = None) -> Kubectl:
    return Kubectl(args, stdin, keep)


def _name(scenario_id: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in scenario_id.lower()).strip("-")
    return f"cf-{slug}"


# -- objects for the tables ------------------------------------------------------------------

CONTAINERS = [{"name": "c", "image": "busybox"}]
TEMPLATE = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": CONTAINERS}}
SELECTOR = {"matchLabels": {"app": "w"}}


def deployment(name: str = "web", replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": SELECTOR, "template": TEMPLATE},
    }


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": CONTAINERS},
}

TABLE_OBJECTS: dict[str, tuple[str, dict[str, Any]]] = {
    "pods": ("/api/v1/namespaces/$ns/pods", POD),
    "deployments": ("/apis/apps/v1/namespaces/$ns/deployments", deployment()),
    "replicasets": (
        "/apis/apps/v1/namespaces/$ns/replicasets",
        {
            "metadata": {"name": "rs"},
            "spec": {"replicas": 3, "selector": SELECTOR, "template": TEMPLATE},
        },
    ),
    "statefulsets": (
        "/apis/apps/v1/namespaces/$ns/statefulsets",
        {
            "metadata": {"name": "sts"},
            "spec": {
                "replicas": 2,
                "serviceName": "sts",
                "selector": SELECTOR,
                "template": TEMPLATE,
            },
        },
    ),
    "daemonsets": (
        "/apis/apps/v1/namespaces/$ns/daemonsets",
        {
            "metadata": {"name": "ds"},
            "spec": {
                "selector": SELECTOR,
                "template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "nodeSelector": {"a": "b"}}},
            },
        },
    ),
    "jobs": (
        "/apis/batch/v1/namespaces/$ns/jobs",
        {
            "metadata": {"name": "job"},
            "spec": {
                "template": {"spec": {"containers": CONTAINERS, "restartPolicy": "Never"}},
            },
        },
    ),
    "cronjobs": (
        "/apis/batch/v1/namespaces/$ns/cronjobs",
        {
            "metadata": {"name": "cj"},
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {"containers": CONTAINERS, "restartPolicy": "OnFailure"}
                        }
                    }
                },
            },
        },
    ),
    "services": (
        "/api/v1/namespaces/$ns/services",
        {
            "metadata": {"name": "svc"},
            "spec": {
                "clusterIP": "None",
                "selector": {"app": "w"},
                "ports": [{"name": "http", "port": 80, "targetPort": 8080}],
            },
        },
    ),
    "configmaps": (
        "/api/v1/namespaces/$ns/configmaps",
        {"metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}},
    ),
    "secrets": (
        "/api/v1/namespaces/$ns/secrets",
        {"metadata": {"name": "sec"}, "type": "Opaque", "stringData": {"a": "1"}},
    ),
    "serviceaccounts": ("/api/v1/namespaces/$ns/serviceaccounts", {"metadata": {"name": "sa"}}),
    "events": (
        "/api/v1/namespaces/$ns/events",
        {
            "metadata": {"name": "ev"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "$ns"},
            "reason": "Testing",
            "message": "a message",
            "type": "Warning",
            "count": 3,
            "firstTimestamp": "2001-02-03T04:05:06Z",
            "lastTimestamp": "2001-02-03T04:05:06Z",
            "source": {"component": "tester"},
        },
    ),
    "leases": (
        "/apis/coordination.k8s.io/v1/namespaces/$ns/leases",
        {
            "metadata": {"name": "lease"},
            "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
        },
    ),
    "ingresses": (
        "/apis/networking.k8s.io/v1/namespaces/$ns/ingresses",
        {
            "metadata": {"name": "ing"},
            "spec": {
                "rules": [
                    {
                        "host": "foo.example.com",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "svc", "port": {"number": 80}}},
                                }
                            ]
                        },
                    }
                ]
            },
        },
    ),
    "persistentvolumeclaims": (
        "/api/v1/namespaces/$ns/persistentvolumeclaims",
        {
            "metadata": {"name": "pvc"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    ),
    "roles": (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/$ns/roles",
        {
            "metadata": {"name": "role"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
    ),
    "resourcequotas": (
        "/api/v1/namespaces/$ns/resourcequotas",
        {"metadata": {"name": "quota"}, "spec": {"hard": {"pods": "10"}}},
    ),
    "rolebindings": (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/$ns/rolebindings",
        {
            "metadata": {"name": "rb"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "view",
            },
            "subjects": [
                {"kind": "User", "name": "alice"},
                {"kind": "ServiceAccount", "name": "default"},
                {"kind": "Group", "name": "devs"},
                {"kind": "User", "name": "bob"},
            ],
        },
    ),
    "poddisruptionbudgets": (
        "/apis/policy/v1/namespaces/$ns/poddisruptionbudgets",
        {"metadata": {"name": "pdb"}, "spec": {"maxUnavailable": "25%", "selector": SELECTOR}},
    ),
    "horizontalpodautoscalers": (
        "/apis/autoscaling/v2/namespaces/$ns/horizontalpodautoscalers",
        {
            "metadata": {"name": "hpa"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 3,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 50},
                        },
                    }
                ],
            },
        },
    ),
    "endpoints": (
        "/api/v1/namespaces/$ns/endpoints",
        {
            "metadata": {"name": "ep"},
            "subsets": [
                {
                    "addresses": [{"ip": "10.1.0.1"}, {"ip": "10.1.0.2"}],
                    "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
                }
            ],
        },
    ),
    "networkpolicies": (
        "/apis/networking.k8s.io/v1/namespaces/$ns/networkpolicies",
        {"metadata": {"name": "np"}, "spec": {"podSelector": SELECTOR}},
    ),
    "limitranges": (
        "/api/v1/namespaces/$ns/limitranges",
        {
            "metadata": {"name": "lr"},
            "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]},
        },
    ),
    "podtemplates": (
        "/api/v1/namespaces/$ns/podtemplates",
        {"metadata": {"name": "pt"}, "template": TEMPLATE},
    ),
}


def _table(kind: str) -> Scenario:
    path, body = TABLE_OBJECTS[kind]
    return Scenario(
        f"kubectl/get-table-{kind}",
        (
            Http("POST", path, body, keep=("metadata.name",)),
            k("get", kind, *NS),
            k("get", kind, *NS, "-o", "wide"),
        ),
        f"kubectl get {kind} (and -o wide): the server's Table columns and rows for a fresh object",
    )


_NODE = _name("kubectl/get-table-nodes")
_PRIORITY_CLASS = _name("kubectl/get-table-priorityclasses")
_CLUSTER_BINDING = _name("kubectl/get-table-clusterrolebindings")
_NAMESPACE = "cf-kubectl-get-table-namespaces"

TABLES = [
    *(_table(kind) for kind in TABLE_OBJECTS),
    Scenario(
        "kubectl/get-table-nodes",
        (
            Http(
                "POST",
                "/api/v1/nodes",
                {"metadata": {"name": _NODE, "labels": {"a": "b"}}},
                keep=("metadata.name",),
            ),
            k("get", "node", _NODE),
            k("get", "node", _NODE, "-o", "wide"),
        ),
        "kubectl get node: a node object without status (no kubelet): NotReady-ish columns",
        namespace=False,
    ),
    Scenario(
        "kubectl/get-table-priorityclasses",
        (
            Http(
                "POST",
                "/apis/scheduling.k8s.io/v1/priorityclasses",
                {"metadata": {"name": _PRIORITY_CLASS}, "value": 1000, "description": "t"},
                keep=("metadata.name",),
            ),
            k("get", "priorityclass", _PRIORITY_CLASS),
        ),
        "kubectl get priorityclass: VALUE GLOBAL-DEFAULT AGE",
        namespace=False,
    ),
    Scenario(
        "kubectl/get-table-clusterrolebindings",
        (
            Http(
                "POST",
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                {
                    "metadata": {"name": _CLUSTER_BINDING},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": "view",
                    },
                    "subjects": [
                        {"kind": "Group", "name": "devs"},
                        {"kind": "ServiceAccount", "name": "robot", "namespace": "ops"},
                    ],
                },
                keep=("metadata.name",),
            ),
            k("get", "clusterrolebinding", _CLUSTER_BINDING, "-o", "wide"),
        ),
        "kubectl get clusterrolebinding -o wide: ROLE, then USERS, GROUPS, SERVICEACCOUNTS",
        namespace=False,
    ),
    Scenario(
        "kubectl/get-table-namespaces",
        (k("get", "namespace", "$ns"), k("get", "namespace", "default", "kube-system")),
        "kubectl get namespace: NAME STATUS AGE",
    ),
    Scenario(
        "kubectl/get-empty-list",
        (k("get", "pods", *NS), k("get", "pods", *NS, *JSON)),
        "kubectl get on an empty namespace: 'No resources found' on stderr; -o json: an empty List",
    ),
    Scenario(
        "kubectl/get-kubernetes-service",
        (
            k("get", "svc", "kubernetes", "-n", "default"),
            k(
                "get",
                "svc",
                "kubernetes",
                "-n",
                "default",
                *JSON,
                keep=(
                    "metadata.labels",
                    "spec.ports.0.name",
                    "spec.ports.0.port",
                    "spec.ports.0.protocol",
                    "spec.type",
                    "spec.sessionAffinity",
                ),
            ),
        ),
        "the 'kubernetes' Service exists in default (ClusterIP, 443/TCP to the API server)",
        namespace=False,
    ),
]

# -- create generators -----------------------------------------------------------------------

KEEP_OBJ = ("apiVersion", "kind", "metadata.name", "metadata.labels", "spec", "data", "rules")


def _create(
    what: str, args: tuple[str, ...], doc: str, keep: tuple[str, ...] | None = None
) -> Scenario:
    return Scenario(
        f"kubectl/create-{what}", (k("create", *args, *NS, *JSON, MANAGED, keep=keep),), doc
    )


CREATES = [
    _create(
        "deployment",
        ("deployment", "web", "--image=nginx", "--replicas=2", "--port=80"),
        "kubectl create deployment: the defaulted Deployment the server stores",
    ),
    _create(
        "configmap",
        ("configmap", "cfg", "--from-literal=a=1", "--from-literal=b=two"),
        "kubectl create configmap --from-literal",
    ),
    _create(
        "secret-generic",
        ("secret", "generic", "sec", "--from-literal=password=s3cret"),
        "kubectl create secret generic: base64 data, type Opaque",
    ),
    _create(
        "service-clusterip",
        ("service", "clusterip", "svc", "--tcp=80:8080"),
        "kubectl create service clusterip (the allocated IP is not compared)",
        keep=(
            "metadata.labels",
            "spec.ports",
            "spec.selector",
            "spec.type",
            "spec.sessionAffinity",
            "spec.ipFamilies",
            "spec.ipFamilyPolicy",
            "spec.internalTrafficPolicy",
        ),
    ),
    _create(
        "ingress",
        ("ingress", "ing", "--rule=foo.example.com/bar*=svc:8080", "--class=nginx"),
        "kubectl create ingress --rule",
    ),
    _create(
        "pdb",
        ("pdb", "pdb", "--selector=app=web", "--min-available=1"),
        "kubectl create poddisruptionbudget",
    ),
    _create(
        "role",
        ("role", "reader", "--verb=get,list", "--resource=pods,deployments.apps"),
        "kubectl create role (resources resolved through discovery)",
    ),
    _create(
        "rolebinding",
        ("rolebinding", "rb", "--role=reader", "--user=alice", "--serviceaccount=$ns:default"),
        "kubectl create rolebinding",
    ),
    Scenario(
        "kubectl/create-clusterrole",
        (
            k(
                "create",
                "clusterrole",
                _name("kubectl/create-clusterrole"),
                "--verb=get",
                "--resource=nodes",
                "--non-resource-url=/logs/*",
                *JSON,
                MANAGED,
            ),
        ),
        "kubectl create clusterrole",
        namespace=False,
    ),
    _create(
        "quota",
        ("quota", "q", "--hard=pods=10,requests.cpu=2"),
        "kubectl create quota: hard limits stored, no status yet",
    ),
    Scenario(
        "kubectl/create-priorityclass",
        (
            k(
                "create",
                "priorityclass",
                _name("kubectl/create-priorityclass"),
                "--value=1000",
                "--description=testing",
                *JSON,
                MANAGED,
            ),
        ),
        "kubectl create priorityclass: preemptionPolicy defaulted",
        namespace=False,
    ),
    _create(
        "job",
        ("job", "j", "--image=busybox"),
        "kubectl create job: the server adds the selector and controller-uid labels",
    ),
    _create(
        "cronjob",
        ("cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *"),
        "kubectl create cronjob: defaulted concurrencyPolicy, history limits",
    ),
    Scenario(
        "kubectl/create-namespace",
        (k("create", "namespace", _name("kubectl/create-namespace"), *JSON, MANAGED),),
        "kubectl create namespace: the kubernetes finalizer and the name label",
        namespace=False,
    ),
    _create(
        "serviceaccount",
        ("serviceaccount", "robot"),
        "kubectl create serviceaccount",
    ),
    Scenario(
        "kubectl/create-token",
        (
            k("create", "token", "default", *NS),
            k("create", "token", "nope", *NS),
        ),
        "kubectl create token (TokenRequest): a JWT comes back; for a missing ServiceAccount: "
        "NotFound",
    ),
    Scenario(
        "kubectl/run-pod",
        (k("run", "p", "--image=busybox", "--restart=Never", *NS, *JSON, keep=("spec",)),),
        "kubectl run: the pod as admitted and defaulted (token volume, tolerations, dnsPolicy)",
    ),
    Scenario(
        "kubectl/create-unknown-field",
        (
            k(
                "create",
                "-f",
                "-",
                *NS,
                stdin="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\njunk: 1\n",
            ),
            k("get", "configmap", "c", *NS),
        ),
        "kubectl create -f with an unknown field: kubectl's validation error, nothing created",
    ),
    Scenario(
        "kubectl/explain-deployment-replicas",
        (k("explain", "deployment.spec.replicas"),),
        "kubectl explain (served from the OpenAPI document)",
        namespace=False,
    ),
]

# -- changing objects ------------------------------------------------------------------------

CM_YAML = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: "1"\n'
CM_BODY = {"metadata": {"name": "c"}, "data": {"k": "v"}}
CREATE_CM = Http("POST", "/api/v1/namespaces/$ns/configmaps", CM_BODY, keep=("metadata.name",))
CREATE_DEPLOY = Http(
    "POST", "/apis/apps/v1/namespaces/$ns/deployments", deployment(), keep=("metadata.name",)
)

CHANGES = [
    Scenario(
        "kubectl/diff-unchanged",
        (
            k("apply", "-f", "-", *NS, stdin=CM_YAML),
            k("diff", "-f", "-", *NS, stdin=CM_YAML),
        ),
        "kubectl diff on an object as applied: exit 0, no output",
    ),
    Scenario(
        "kubectl/diff-changed",
        (
            k("apply", "-f", "-", *NS, stdin=CM_YAML),
            k("diff", "-f", "-", *NS, stdin=CM_YAML.replace('"1"', '"2"')),
        ),
        "kubectl diff on a changed manifest: exit 1 and the unified diff",
    ),
    Scenario(
        "kubectl/diff-new-object",
        (k("diff", "-f", "-", *NS, stdin=CM_YAML),),
        "kubectl diff on an object that does not exist: the whole object as added",
    ),
    Scenario(
        "kubectl/scale-current-replicas-matching",
        (
            CREATE_DEPLOY,
            k("scale", "deployment", "web", "--current-replicas=2", "--replicas=3", *NS),
            k("get", "deployment", "web", *NS, "-o", "jsonpath={.spec.replicas}"),
        ),
        "kubectl scale --current-replicas matching the object: scaled",
    ),
    Scenario(
        "kubectl/scale-current-replicas-mismatch",
        (
            CREATE_DEPLOY,
            k("scale", "deployment", "web", "--current-replicas=5", "--replicas=3", *NS),
            k("get", "deployment", "web", *NS, "-o", "jsonpath={.spec.replicas}"),
        ),
        "kubectl scale --current-replicas not matching: an error, nothing changed",
    ),
    Scenario(
        "kubectl/autoscale-deployment",
        (
            CREATE_DEPLOY,
            k(
                "autoscale",
                "deployment",
                "web",
                "--min=1",
                "--max=3",
                "--cpu-percent=50",
                *NS,
                *JSON,
                keep=("apiVersion", "kind", "metadata.name", "spec", "status"),
            ),
        ),
        "kubectl autoscale deployment: the HorizontalPodAutoscaler it creates",
    ),
    Scenario(
        "kubectl/auth-can-i",
        (
            k("auth", "can-i", "create", "pods", *NS),
            k("auth", "can-i", "create", "pods", *NS, "--as=system:serviceaccount:$ns:default"),
        ),
        "kubectl auth can-i: yes for the admin; no for a ServiceAccount without bindings",
    ),
    Scenario(
        "kubectl/label-flow",
        (
            CREATE_CM,
            k("label", "configmap", "c", "env=prod", *NS),
            k("label", "configmap", "c", "env=dev", *NS),
            k("label", "configmap", "c", "env=dev", "--overwrite", *NS),
            k("label", "configmap", "c", "tier=web", "env-", *NS),
            k(
                "get",
                "configmap",
                "c",
                *NS,
                *JSON,
                keep=("metadata.labels", "metadata.managedFields"),
            ),
        ),
        "kubectl label: add, refuse to overwrite without --overwrite, overwrite, remove",
    ),
    Scenario(
        "kubectl/annotate-flow",
        (
            CREATE_CM,
            k("annotate", "configmap", "c", "note=one", *NS),
            k("annotate", "configmap", "c", "note=two", *NS),
            k("annotate", "configmap", "c", "note=two", "--overwrite", *NS),
            k("annotate", "configmap", "c", "note-", *NS),
            k("get", "configmap", "c", *NS, *JSON, keep=("metadata.annotations",)),
        ),
        "kubectl annotate: add, refuse to overwrite, overwrite, remove",
    ),
    Scenario(
        "kubectl/patch-flow",
        (
            CREATE_CM,
            k("patch", "configmap", "c", "-p", '{"data":{"k":"v2","x":"1"}}', *NS),
            k("patch", "configmap", "c", "--type=merge", "-p", '{"data":{"x":null}}', *NS),
            k(
                "patch",
                "configmap",
                "c",
                "--type=json",
                "-p",
                '[{"op":"replace","path":"/data/k","value":"v3"}]',
                *NS,
            ),
            k("patch", "configmap", "c", "-p", '{"data":{"k":"v3"}}', *NS),
            k(
                "patch",
                "configmap",
                "c",
                "--type=json",
                "-p",
                '[{"op":"test","path":"/data/k","value":"nope"}]',
                *NS,
            ),
            k("get", "configmap", "c", *NS, "-o", "jsonpath={.data}"),
        ),
        "kubectl patch: strategic, merge and JSON patches; a no-op patch; a failing test op",
    ),
    Scenario(
        "kubectl/replace-and-set-image",
        (
            CREATE_DEPLOY,
            k("set", "image", "deployment/web", "c=busybox:2", *NS),
            k(
                "replace",
                "-f",
                "-",
                *NS,
                stdin=("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n"),
            ),
            k(
                "get",
                "deployment",
                "web",
                *NS,
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image} {.metadata.generation}",
            ),
        ),
        "kubectl set image (an edit without an editor) bumps generation; replace of a missing "
        "object fails",
    ),
    Scenario(
        "kubectl/delete-cascade-orphan",
        (
            CREATE_DEPLOY,
            k("delete", "deployment", "web", "--cascade=orphan", "--wait=false", *NS),
            k(
                "get",
                "deployment",
                "web",
                *NS,
                *JSON,
                keep=("metadata.finalizers", "metadata.deletionTimestamp"),
            ),
        ),
        "kubectl delete --cascade=orphan: the orphan finalizer holds the object (no garbage "
        "collector runs)",
    ),
    Scenario(
        "kubectl/delete-cascade-foreground",
        (
            CREATE_DEPLOY,
            k("delete", "deployment", "web", "--cascade=foreground", "--wait=false", *NS),
            k(
                "get",
                "deployment",
                "web",
                *NS,
                *JSON,
                keep=("metadata.finalizers", "metadata.deletionTimestamp"),
            ),
        ),
        "kubectl delete --cascade=foreground: the foregroundDeletion finalizer holds the object",
    ),
    Scenario(
        "kubectl/wait-for-delete",
        (
            Http(
                "POST",
                "/api/v1/namespaces/$ns/configmaps",
                {**CM_BODY, "metadata": {"name": "c", "finalizers": ["example.com/hold"]}},
                keep=("metadata.finalizers",),
            ),
            k("delete", "configmap", "c", "--wait=false", *NS),
            k("wait", "--for=delete", "configmap/c", "--timeout=0s", *NS),
            Http(
                "PATCH",
                "/api/v1/namespaces/$ns/configmaps/c",
                {"metadata": {"finalizers": None}},
                content_type="merge",
                keep=("metadata.name",),
            ),
            k("wait", "--for=delete", "configmap/c", "--timeout=10s", *NS),
        ),
        "kubectl wait --for=delete: not met while a finalizer holds the object (--timeout=0s: one "
        "check, no watch), then met once it is gone",
    ),
    Scenario(
        "kubectl/rollout-history",
        (CREATE_DEPLOY, k("rollout", "history", "deployment/web", *NS)),
        "kubectl rollout history on a bare server: no ReplicaSets, so no revisions",
    ),
    Scenario(
        "kubectl/rollout-undo",
        (CREATE_DEPLOY, k("rollout", "undo", "deployment/web", *NS)),
        "kubectl rollout undo on a bare server: no history to roll back to",
    ),
    Scenario(
        "kubectl/expose-deployment",
        (
            CREATE_DEPLOY,
            k(
                "expose",
                "deployment",
                "web",
                "--port=80",
                "--target-port=8080",
                *NS,
                *JSON,
                keep=("metadata.name", "spec.ports", "spec.selector", "spec.type"),
            ),
        ),
        "kubectl expose: a Service selecting the deployment's pods",
    ),
]

ROLE_AND_BINDING = (
    Http(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/$ns/roles",
        {
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get"]}],
        },
        keep=("metadata.name",),
    ),
    Http(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/$ns/rolebindings",
        {
            "metadata": {"name": "read"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "default"}],
        },
        keep=("metadata.name",),
    ),
)
AS_SA = "--as=system:serviceaccount:$ns:default"


def _review(verb: str, subresource: str = "") -> Http:
    attributes = {"namespace": "$ns", "verb": verb, "resource": "pods"}
    if subresource:
        attributes["subresource"] = subresource
    return Http(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {"spec": {"resourceAttributes": attributes}},
        headers={"Impersonate-User": "system:serviceaccount:$ns:default"},
        keep=("status",),
    )


DEPLOY_YAML = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: envs
spec:
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec:
      containers:
      - name: c
        image: busybox
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
      - name: d
        image: busybox
"""

MORE = [
    Scenario(
        "kubectl/auth-can-i-with-a-binding",
        (
            *ROLE_AND_BINDING,
            k("auth", "can-i", "get", "pods", *NS, AS_SA),
            k("auth", "can-i", "get", "pods/log", *NS, AS_SA),
            k("auth", "can-i", "delete", "pods", *NS, AS_SA),
            _review("get"),
            _review("get", "log"),
        ),
        "kubectl auth can-i for a ServiceAccount a RoleBinding grants to: yes for what the role "
        "allows; the review's reason names the binding",
    ),
    Scenario(
        "kubectl/create-invalid-type",
        (
            k(
                "create",
                "-f",
                "-",
                *NS,
                stdin=(
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
                    '  - name: c\n    image: busybox\n    ports:\n    - containerPort: "80"\n'
                ),
            ),
        ),
        "kubectl create -f with a string where an integer belongs: kubectl's validation error",
    ),
    Scenario(
        "kubectl/create-missing-required",
        (
            k(
                "create",
                "-f",
                "-",
                *NS,
                stdin=(
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n"
                    "  template:\n    spec:\n      containers:\n      - image: busybox\n"
                ),
            ),
        ),
        "kubectl create -f without required fields (spec.selector, a container's name): "
        "kubectl's validation errors",
    ),
    Scenario(
        "kubectl/create-clusterrolebinding",
        (
            k(
                "create",
                "clusterrolebinding",
                _name("kubectl/create-clusterrolebinding"),
                "--clusterrole=view",
                "--user=alice",
                "--group=devs",
                "--serviceaccount=ops:robot",
                *JSON,
                keep=("apiVersion", "kind", "metadata.name", "roleRef", "subjects"),
            ),
        ),
        "kubectl create clusterrolebinding (a protobuf body)",
        namespace=False,
    ),
    Scenario(
        "kubectl/apply-removes-list-items",
        (
            k("apply", "-f", "-", *NS, stdin=DEPLOY_YAML),
            k(
                "apply",
                "-f",
                "-",
                *NS,
                stdin=DEPLOY_YAML.replace(', {name: B, value: "2"}', "").split("      - name: d")[
                    0
                ],
            ),
            k(
                "get",
                "deployment",
                "envs",
                *NS,
                "-o",
                "jsonpath={.spec.template.spec.containers[*].name} "
                "{.spec.template.spec.containers[0].env[*].name}",
            ),
        ),
        "kubectl apply of a manifest without an env var and a container: both removed (kubectl "
        "computes the patch from the OpenAPI merge keys)",
    ),
    Scenario(
        "kubectl/openapi-v2-not-acceptable-and-no-v3",
        (
            Http("GET", "/openapi/v2", headers={"Accept": "text/html"}),
            Http("GET", "/openapi/v3"),
            Http("GET", "/openapi/v3/apis/apps/v1"),
        ),
        "/openapi/v2 in a format it does not serve: 406; no /openapi/v3 in 1.24 (plain 404)",
        namespace=False,
    ),
]

SCENARIOS = [*TABLES, *CREATES, *CHANGES, *MORE]
