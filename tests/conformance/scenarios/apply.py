"""Server-side apply: ``PATCH`` with ``application/apply-patch+yaml`` and ``?fieldManager=``.

Ownership (``managedFields``), conflicts between managers, removal by omission, merge keys,
subresources, the request errors, and kubectl's client-side to server-side hand-over.
"""

from __future__ import annotations

from typing import Any

from ..scenario import Http, Kubectl, Scenario, WaitFor

CMS = "/api/v1/namespaces/$ns/configmaps"
DEPLOYS = "/apis/apps/v1/namespaces/$ns/deployments"

MF = "metadata.managedFields"
KEEP_CM = ("data", MF)


def cm(name: str = "c", data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
    }
    if data is not None:
        body["data"] = data
    return body


def apply(
    path: str,
    body: Any,
    manager: str | None = "m1",
    *,
    force: bool = False,
    keep: tuple[str, ...] | None = KEEP_CM,
    **query: str,
) -> Http:
    """A server-side apply of ``body`` to ``path`` by ``manager``."""
    params = dict(query)
    if manager is not None:
        params["fieldManager"] = manager
    if force:
        params["force"] = "true"
    return Http("PATCH", path, body, query=params or None, content_type="apply", keep=keep)


def deploy(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": containers},
            },
            **spec,
        },
    }


KEEP_DEPLOY = ("spec.replicas", "spec.template.spec.containers", MF)

CM_YAML = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  labels:
    tier: web
data:
  a: "1"
  b: two
"""

SCENARIOS = [
    Scenario(
        "apply/create",
        (
            apply(f"{CMS}/c", cm(data={"a": "1"}), keep=None),
            Http("GET", f"{CMS}/c", keep=KEEP_CM),
        ),
        "apply to a missing object creates it: 201 with an Apply entry in managedFields",
    ),
    Scenario(
        "apply/yaml-body",
        (apply(f"{CMS}/c", CM_YAML, keep=("data", "metadata.labels", MF)),),
        "the apply body is YAML",
    ),
    Scenario(
        "apply/data-empty-then-other-key",
        (
            apply(f"{CMS}/c", cm(data={"a": "1"})),
            apply(f"{CMS}/c", cm(data={})),
            apply(f"{CMS}/c", cm(data={"b": "2"})),
            Http("GET", f"{CMS}/c", keep=KEEP_CM),
        ),
        "apply data {a: 1}, then data {}, then data {b: 2}: the manager's applied set each "
        "time; ends with {b: 2}",
    ),
    Scenario(
        "apply/remove-field-by-omission",
        (
            apply(f"{CMS}/c", cm(data={"a": "1", "b": "2"}, labels={"x": "1", "y": "2"})),
            apply(
                f"{CMS}/c",
                cm(data={"a": "1"}, labels={"x": "1"}),
                keep=("data", "metadata.labels", MF),
            ),
        ),
        "a field the manager applied before and omits now is removed",
    ),
    Scenario(
        "apply/conflict-two-managers",
        (
            apply(f"{CMS}/c", cm(data={"a": "1", "b": "1"}), "m1"),
            apply(f"{CMS}/c", cm(data={"a": "2", "b": "2"}), "m2"),
            Http("GET", f"{CMS}/c", keep=KEEP_CM),
        ),
        "a second manager applying a different value for owned fields: 409 Conflict with one "
        "cause per field",
    ),
    Scenario(
        "apply/force-takes-ownership",
        (
            apply(f"{CMS}/c", cm(data={"a": "1", "b": "1"}), "m1"),
            apply(f"{CMS}/c", cm(data={"a": "2"}), "m2", force=True),
            apply(f"{CMS}/c", cm(data={"b": "1"}), "m1"),
        ),
        "force=true moves the conflicting fields to the forcing manager; the loser no longer "
        "owns them, so omitting them does not remove them",
    ),
    Scenario(
        "apply/same-value-shared-ownership",
        (
            apply(f"{CMS}/c", cm(data={"a": "1"}), "m1"),
            apply(f"{CMS}/c", cm(data={"a": "1"}), "m2"),
            apply(f"{CMS}/c", cm(data={}), "m1"),
        ),
        "two managers applying the same value share the field (no conflict); one dropping it "
        "leaves it with the other",
    ),
    Scenario(
        "apply/update-then-apply-managedfields",
        (
            Http(
                "POST",
                CMS,
                cm(data={"a": "1"}),
                query={"fieldManager": "creator"},
                keep=KEEP_CM,
            ),
            apply(f"{CMS}/c", cm(data={"b": "2"}), "m1"),
            Http(
                "PATCH",
                f"{CMS}/c",
                {"data": {"c": "3"}},
                content_type="merge",
                query={"fieldManager": "patcher"},
                keep=KEEP_CM,
            ),
        ),
        "Update entries (create, merge patch) sit beside the Apply entry in managedFields",
    ),
    Scenario(
        "apply/update-steals-then-apply-conflicts",
        (
            apply(f"{CMS}/c", cm(data={"a": "1"}), "m1"),
            Http(
                "PATCH",
                f"{CMS}/c",
                {"data": {"a": "changed"}},
                content_type="merge",
                query={"fieldManager": "editor"},
                keep=KEEP_CM,
            ),
            apply(f"{CMS}/c", cm(data={"a": "1"}), "m1"),
        ),
        "an update takes the field from the applier without a conflict; re-applying the old "
        "value then conflicts with the updater",
    ),
    Scenario(
        "apply/list-merge-key-containers",
        (
            apply(
                f"{DEPLOYS}/d",
                deploy("d", [{"name": "a", "image": "nginx"}], replicas=1),
                "m1",
                keep=KEEP_DEPLOY,
            ),
            apply(
                f"{DEPLOYS}/d",
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": "d"},
                    "spec": {
                        "template": {
                            "spec": {"containers": [{"name": "b", "image": "busybox"}]},
                        },
                    },
                },
                "m2",
                keep=KEEP_DEPLOY,
            ),
            apply(
                f"{DEPLOYS}/d",
                deploy("d", [{"name": "a", "image": "nginx:2"}], replicas=1),
                "m1",
                keep=KEEP_DEPLOY,
            ),
        ),
        "containers merge by name: a second manager's container is added beside the first's; "
        "each owns its own item",
    ),
    Scenario(
        "apply/status-subresource",
        (
            apply(
                f"{DEPLOYS}/d",
                deploy("d", [{"name": "a", "image": "nginx"}], replicas=2),
                "m1",
                keep=("status", MF),
            ),
            apply(
                f"{DEPLOYS}/d/status",
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": "d"},
                    "spec": {"replicas": 9},
                    "status": {"replicas": 2, "readyReplicas": 1},
                },
                "status-writer",
                keep=("spec.replicas", "status", MF),
            ),
        ),
        "apply to /status sets status (spec is ignored); its managedFields entry names the "
        "subresource",
    ),
    Scenario(
        "apply/no-field-manager-422",
        (apply(f"{CMS}/c", cm(data={"a": "1"}), None), Http("GET", f"{CMS}/c")),
        "apply without fieldManager: 422 (PatchOptions invalid), nothing created",
    ),
    Scenario(
        "apply/name-mismatch",
        (apply(f"{CMS}/c", cm("other", {"a": "1"})), Http("GET", f"{CMS}/other")),
        "the body's name differs from the URL's: 400",
    ),
    Scenario(
        "apply/kind-mismatch",
        (
            apply(
                f"{CMS}/c",
                {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}},
            ),
        ),
        "the body's kind differs from the resource's: kube-apiserver answers 500",
    ),
    Scenario(
        "apply/missing-kind",
        (apply(f"{CMS}/c", {"apiVersion": "v1", "metadata": {"name": "c"}, "data": {}}),),
        "an apply body without kind: kube-apiserver answers 500",
    ),
    Scenario(
        "apply/invalid-yaml",
        (apply(f"{CMS}/c", "data: [unclosed\n  - x"),),
        "a body that is not YAML: 400 with the parse error",
    ),
    Scenario(
        "apply/invalid-object-422",
        (
            apply(f"{CMS}/c", cm(data={"bad key!": "1"})),
            Http("GET", f"{CMS}/c"),
        ),
        "an apply that creates an invalid object: 422 from validation, nothing stored",
    ),
    Scenario(
        "apply/dry-run",
        (
            apply(f"{CMS}/c", cm(data={"a": "1"}), dryRun="All"),
            Http("GET", f"{CMS}/c"),
        ),
        "dryRun=All: the would-be object comes back, nothing is stored",
    ),
    Scenario(
        "apply/stale-resourceversion-409",
        (
            apply(f"{CMS}/c", cm(data={"a": "1"})),
            apply(f"{CMS}/c", cm(data={"a": "2"}, resourceVersion="1")),
        ),
        "an apply carrying a stale metadata.resourceVersion: 409 Conflict",
    ),
    Scenario(
        "apply/labels-granular-map",
        (
            apply(f"{CMS}/c", cm(labels={"a": "1"}), "m1", keep=("metadata.labels", MF)),
            apply(f"{CMS}/c", cm(labels={"b": "2"}), "m2", keep=("metadata.labels", MF)),
        ),
        "labels are a granular map: two managers' labels live side by side",
    ),
    Scenario(
        "apply/kubectl-client-side-then-server-side",
        (
            Kubectl(
                ("apply", "-n", "$ns", "-f", "-", "-o", "json", "--show-managed-fields"),
                CM_YAML,
                keep=(*KEEP_CM, "metadata.annotations"),
            ),
            Kubectl(
                (
                    "apply",
                    "-n",
                    "$ns",
                    "--server-side",
                    "-f",
                    "-",
                    "-o",
                    "json",
                    "--show-managed-fields",
                ),
                CM_YAML.replace("b: two", "b: three"),
                keep=(*KEEP_CM, "metadata.annotations"),
            ),
        ),
        "kubectl apply (client-side, last-applied annotation, kubectl-client-side-apply) then "
        "kubectl apply --server-side: ownership is handed over to 'kubectl'",
    ),
    Scenario(
        "apply/kubectl-server-side-dry-run",
        (
            Kubectl(
                (
                    "apply",
                    "-n",
                    "$ns",
                    "--server-side",
                    "--dry-run=server",
                    "-f",
                    "-",
                    "-o",
                    "json",
                    "--show-managed-fields",
                ),
                CM_YAML,
                keep=KEEP_CM,
            ),
            Kubectl(("get", "configmap", "c", "-n", "$ns", "-o", "json")),
        ),
        "kubectl apply --server-side --dry-run=server: the object comes back, nothing is stored",
    ),
    Scenario(
        "apply/kubectl-server-side-conflict",
        (
            Kubectl(("apply", "-n", "$ns", "--server-side", "-f", "-"), CM_YAML),
            Kubectl(
                ("apply", "-n", "$ns", "--server-side", "--field-manager=other", "-f", "-"),
                CM_YAML.replace("b: two", "b: three"),
            ),
            Kubectl(
                (
                    "apply",
                    "-n",
                    "$ns",
                    "--server-side",
                    "--field-manager=other",
                    "--force-conflicts",
                    "-f",
                    "-",
                ),
                CM_YAML.replace("b: two", "b: three"),
            ),
        ),
        "kubectl apply --server-side by another manager: the conflict error text; "
        "--force-conflicts wins",
    ),
]

# -- managedFields of updates, custom resources' list types, kubectl's upgrade of a CR --------

_MANAGED = ("metadata.managedFields",)

SCENARIOS += [
    Scenario(
        "apply/update-entries-own-what-they-add",
        (
            Http(
                "POST",
                DEPLOYS,
                deploy("d", [{"name": "c", "image": "nginx"}]),
                query={"fieldManager": "a-creator"},
                keep=_MANAGED,
            ),
            Http(
                "PATCH",
                f"{DEPLOYS}/d",
                {
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "c",
                                        "image": "nginx:2",
                                        "env": [{"name": "A", "value": "1"}],
                                    }
                                ],
                                "nodeSelector": {"a": "b"},
                                "tolerations": [{"key": "k", "operator": "Exists"}],
                            }
                        }
                    }
                },
                content_type="strategic",
                query={"fieldManager": "b-editor"},
                keep=_MANAGED,
            ),
            Http(
                "PATCH",
                f"{DEPLOYS}/d/status",
                {
                    "status": {
                        "replicas": 1,
                        "conditions": [{"type": "Available", "status": "True"}],
                    }
                },
                content_type="merge",
                query={"fieldManager": "c-status"},
                keep=_MANAGED,
            ),
        ),
        "Update entries own the maps, lists and items they add ('.'), not what the Go types "
        "always have (spec.template, containers); an added struct brings its zero members (a "
        "container's resources, a condition's times); a label selector is atomic",
    ),
]

_CR_GROUP = "apply-custom-resource-list-types.example.com"
_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{_CR_GROUP}"},
    "spec": {
        "group": _CR_GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "items": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name", "port"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name", "port"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "port": {"type": "integer"},
                                                "v": {"type": "string"},
                                            },
                                        },
                                    },
                                    "set": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "set",
                                        "items": {"type": "string"},
                                    },
                                    "atom": {
                                        "type": "object",
                                        "x-kubernetes-map-type": "atomic",
                                        "properties": {
                                            "a": {"type": "string"},
                                            "b": {"type": "string"},
                                        },
                                    },
                                    "gran": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                    },
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "ready": {"type": "boolean"},
                                    "conds": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["type"],
                                        "items": {
                                            "type": "object",
                                            "required": ["type"],
                                            "properties": {
                                                "type": {"type": "string"},
                                                "status": {"type": "string"},
                                            },
                                        },
                                    },
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}
_WIDGETS = f"/apis/{_CR_GROUP}/v1/namespaces/$ns/widgets"
_CR_KEEP = ("spec", "status", MF)


def _widget(manager: str, sub: str = "", force: bool = False, **top: Any) -> Http:
    body = {"apiVersion": f"{_CR_GROUP}/v1", "kind": "Widget", "metadata": {"name": "w"}, **top}
    path = f"{_WIDGETS}/w" + (f"/{sub}" if sub else "")
    return apply(path, body, manager, force=force, keep=_CR_KEEP)


SCENARIOS += [
    Scenario(
        "apply/custom-resource-list-types",
        (
            Http(
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                _CRD,
                keep=("metadata.name",),
            ),
            WaitFor(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{_CR_GROUP}",
                "status.conditions.[type=Established].status",
                "True",
            ),
            WaitFor(f"/apis/{_CR_GROUP}/v1"),
            _widget(
                "m1",
                spec={
                    "items": [{"name": "a", "port": 1, "v": "x"}],
                    "set": ["p", "q"],
                    "atom": {"a": "1"},
                    "gran": {"k": "1"},
                },
            ),
            _widget(
                "m2",
                spec={
                    "items": [{"name": "a", "port": 2}],
                    "set": ["r"],
                    "atom": {"b": "2"},
                    "gran": {"j": "2"},
                },
            ),
            _widget("m3", spec={"atom": {"a": "1", "b": "3"}}),
            _widget("m4", force=True, spec={"items": [{"name": "a", "port": 1, "v": "y"}]}),
            _widget("m1", spec={"set": ["q"]}),
            _widget(
                "m5",
                sub="status",
                status={"ready": True, "conds": [{"type": "A", "status": "T"}]},
            ),
            Http(
                "PATCH",
                f"{_WIDGETS}/w/status",
                {"status": {"conds": [{"type": "A", "status": "F"}, {"type": "B", "status": "T"}]}},
                content_type="merge",
                query={"fieldManager": "up"},
                keep=_CR_KEEP,
            ),
            Http(
                "DELETE",
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{_CR_GROUP}",
                keep=("metadata.name",),
            ),
        ),
        "server-side apply on a custom resource by its schema: a map list keyed by two fields, "
        "a set, an atomic map (conflicts as one field), a granular map, force, removal of a "
        "set item by omission, apply to /status (subresource entry) and an update taking over",
    ),
]
