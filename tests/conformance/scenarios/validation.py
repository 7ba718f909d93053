"""Validation on every write path: object metadata, immutable fields, status rules and per-kind
validation, as kube-apiserver answers them (422 Invalid with its causes, 400 for mismatches)."""

from __future__ import annotations

import copy
from typing import Any

from ..scenario import Http, Scenario

CMS = "/api/v1/namespaces/$ns/configmaps"
SECRETS = "/api/v1/namespaces/$ns/secrets"
PODS = "/api/v1/namespaces/$ns/pods"
SERVICES = "/api/v1/namespaces/$ns/services"
PVCS = "/api/v1/namespaces/$ns/persistentvolumeclaims"
DEPLOYS = "/apis/apps/v1/namespaces/$ns/deployments"
RSS = "/apis/apps/v1/namespaces/$ns/replicasets"
JOBS = "/apis/batch/v1/namespaces/$ns/jobs"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/$ns/leases"
APPLY = {"fieldManager": "x"}

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
CM_IMMUTABLE = {**CM, "immutable": True}
SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "s"},
    "type": "Opaque",
    "data": {"k": "dg=="},
}
SECRET_IMMUTABLE = {**SECRET, "immutable": True}
CONTAINER = {"name": "c", "image": "nginx:1.21"}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [CONTAINER]},
}
POD_WITH_PORT = {
    **POD,
    "spec": {"containers": [{**CONTAINER, "ports": [{"containerPort": 80}]}]},
}
TEMPLATE = {
    "metadata": {"labels": {"app": "d"}},
    "spec": {"containers": [CONTAINER]},
}
DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}}, "template": TEMPLATE},
}
RS = {**DEPLOY, "kind": "ReplicaSet", "metadata": {"name": "rs"}}
JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "j"},
    "spec": {
        "template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}},
    },
}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "svc"},
    "spec": {"selector": {"app": "d"}, "ports": [{"port": 80}]},
}
PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "pvc"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}
LEASE = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "l"},
    "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
}
OWNER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u1"}
BIG_ANNOTATION = "x" * (256 * 1024)


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with the dotted ``path`` set to ``value`` (``None`` deletes)."""
    out = copy.deepcopy(obj)
    parts = path.split(".")
    node: Any = out
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if value is None:
        node.pop(parts[-1], None)
    elif isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value
    return out


def _cm(**meta: Any) -> dict[str, Any]:
    return {**CM, "metadata": {"name": "a", **meta}}


def _meta_invalid(slug: str, doc: str, **meta: Any) -> Scenario:
    return Scenario(f"validation/{slug}", (Http("POST", CMS, _cm(**meta)),), doc)


KEEP_META = ("metadata.name", "metadata.generation", "metadata.labels", "data")

METADATA = [
    _meta_invalid("name-uppercase-422", "a name with capitals: 422", name="Bad"),
    _meta_invalid("name-too-long-422", "a 254-character name: 422", name="a" * 254),
    _meta_invalid("name-double-dot-422", "a name with '..': 422", name="a..b"),
    Scenario(
        "validation/name-empty-422",
        (Http("POST", CMS, {"data": {"k": "v"}}),),
        "neither name nor generateName: 422 Required",
    ),
    Scenario(
        "validation/generatename-ok",
        (
            Http(
                "POST",
                CMS,
                {"metadata": {"generateName": "gen-"}},
                keep=("metadata",),
            ),
        ),
        "generateName: a name is made from it",
    ),
    Scenario(
        "validation/generatename-invalid-422",
        (Http("POST", CMS, {"metadata": {"generateName": "Bad_"}}),),
        "an invalid generateName: 422",
    ),
    Scenario(
        "validation/generatename-with-name-uses-name",
        (Http("POST", CMS, _cm(generateName="gen-"), keep=("metadata.name",)),),
        "name and generateName: the name is used",
    ),
    _meta_invalid("label-key-invalid-422", "a label key with a space", labels={"bad key": "v"}),
    _meta_invalid(
        "label-key-prefix-invalid-422",
        "a label key prefix not a DNS subdomain",
        labels={"Ex_/k": "v"},
    ),
    _meta_invalid("label-value-too-long-422", "a 64-character label value", labels={"k": "v" * 64}),
    _meta_invalid(
        "annotation-key-invalid-422", "an annotation key with a space", annotations={"a b": "v"}
    ),
    _meta_invalid(
        "annotations-too-large-422",
        "annotations over 256KiB in total: 422 TooLong",
        annotations={"k": BIG_ANNOTATION},
    ),
    _meta_invalid(
        "finalizer-invalid-422", "a finalizer name with a space", finalizers=["bad finalizer"]
    ),
    Scenario(
        "validation/finalizer-added-while-deleting-422",
        (
            Http("POST", CMS, _cm(finalizers=["example.com/f"]), keep=KEEP_META),
            Http("DELETE", f"{CMS}/a", keep=("metadata.finalizers",)),
            Http(
                "PATCH",
                f"{CMS}/a",
                {"metadata": {"finalizers": ["example.com/f", "example.com/g"]}},
                content_type="merge",
            ),
            Http(
                "PATCH",
                f"{CMS}/a",
                {"metadata": {"finalizers": None}},
                content_type="merge",
                keep=("metadata.finalizers",),
            ),
        ),
        "no new finalizers on an object being deleted; removing them is fine",
    ),
    _meta_invalid(
        "ownerref-missing-uid-422",
        "an ownerReference without uid",
        ownerReferences=[{k: v for k, v in OWNER.items() if k != "uid"}],
    ),
    _meta_invalid(
        "ownerref-missing-fields-422",
        "an ownerReference without apiVersion, kind and name",
        ownerReferences=[{"uid": "u1"}],
    ),
    _meta_invalid(
        "ownerref-two-controllers-422",
        "two ownerReferences with controller: true",
        ownerReferences=[
            {**OWNER, "controller": True},
            {**OWNER, "name": "owner2", "uid": "u2", "controller": True},
        ],
    ),
    Scenario(
        "validation/ownerref-ok",
        (
            Http(
                "POST",
                CMS,
                _cm(ownerReferences=[{**OWNER, "controller": True, "blockOwnerDeletion": True}]),
                keep=("metadata.ownerReferences",),
            ),
        ),
        "a well-formed ownerReference (the owner need not exist)",
    ),
    Scenario(
        "validation/system-fields-on-create",
        (
            Http(
                "POST",
                CMS,
                _cm(
                    uid="my-uid",
                    creationTimestamp="2001-02-03T04:05:06Z",
                    deletionTimestamp="2001-02-03T04:05:06Z",
                    deletionGracePeriodSeconds=30,
                    generation=5,
                    selfLink="/my/link",
                ),
                keep=(
                    "metadata.uid",
                    "metadata.creationTimestamp",
                    "metadata.deletionTimestamp",
                    "metadata.deletionGracePeriodSeconds",
                    "metadata.generation",
                    "metadata.selfLink",
                ),
            ),
        ),
        "uid, timestamps, deletion fields and selfLink a client sends on create",
    ),
    Scenario(
        "validation/resourceversion-on-create",
        (Http("POST", CMS, _cm(resourceVersion="12345")),),
        "a resourceVersion on create",
    ),
    Scenario(
        "validation/uid-change-on-update-422",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http("PATCH", f"{CMS}/a", {"metadata": {"uid": "other"}}, content_type="merge"),
        ),
        "changing the uid on update",
    ),
    Scenario(
        "validation/system-fields-change-on-update-ignored",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{CMS}/a",
                {
                    "metadata": {
                        "creationTimestamp": "2001-02-03T04:05:06Z",
                        "generation": 9,
                        "selfLink": "/my/link",
                    }
                },
                content_type="merge",
                keep=("metadata.creationTimestamp", "metadata.generation", "metadata.selfLink"),
            ),
        ),
        "creationTimestamp, generation and selfLink changes on update",
    ),
    Scenario(
        "validation/deletiontimestamp-set-on-update-422",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{CMS}/a",
                {"metadata": {"deletionTimestamp": "2001-02-03T04:05:06Z"}},
                content_type="merge",
            ),
        ),
        "setting deletionTimestamp by update",
    ),
    Scenario(
        "validation/namespace-mismatch-create-400",
        (Http("POST", CMS, _cm(namespace="other")),),
        "a body namespace other than the URL's on create: 400",
    ),
    Scenario(
        "validation/namespace-mismatch-update-400",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http("PUT", f"{CMS}/a", _cm(namespace="other")),
        ),
        "a body namespace other than the URL's on update: 400",
    ),
    Scenario(
        "validation/name-mismatch-update-400",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http("PUT", f"{CMS}/a", {**CM, "metadata": {"name": "b"}}),
        ),
        "a body name other than the URL's on update: 400",
    ),
    Scenario(
        "validation/name-change-merge-patch-400",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http("PATCH", f"{CMS}/a", {"metadata": {"name": "b"}}, content_type="merge"),
        ),
        "a merge patch renaming the object",
    ),
    Scenario(
        "validation/namespace-on-cluster-scoped-object",
        (
            Http(
                "POST",
                "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                {"metadata": {"name": "cf-validation-ns-on-cluster", "namespace": "foo"}},
                keep=("metadata.name", "metadata.namespace"),
            ),
        ),
        "a namespace in the body of a cluster-scoped object",
        namespace=False,
    ),
    Scenario(
        "validation/namespace-name-invalid-422",
        (Http("POST", "/api/v1/namespaces", {"metadata": {"name": "Bad.ns"}}),),
        "a namespace name is a DNS label: 422",
        namespace=False,
    ),
]

# The same validation on every write path: a Deployment with replicas < 0.
NEG = -1
WRITE_PATHS = [
    Scenario(
        "validation/deploy-replicas-negative-create-422",
        (Http("POST", DEPLOYS, _with(DEPLOY, "spec.replicas", NEG)),),
        "replicas < 0 on create",
    ),
    Scenario(
        "validation/deploy-replicas-negative-put-422",
        (
            Http("POST", DEPLOYS, DEPLOY, keep=("spec.replicas",)),
            Http("PUT", f"{DEPLOYS}/d", _with(DEPLOY, "spec.replicas", NEG)),
        ),
        "replicas < 0 on update (PUT)",
    ),
    Scenario(
        "validation/deploy-replicas-negative-merge-patch-422",
        (
            Http("POST", DEPLOYS, DEPLOY, keep=("spec.replicas",)),
            Http("PATCH", f"{DEPLOYS}/d", {"spec": {"replicas": NEG}}, content_type="merge"),
        ),
        "replicas < 0 by merge patch",
    ),
    Scenario(
        "validation/deploy-replicas-negative-json-patch-422",
        (
            Http("POST", DEPLOYS, DEPLOY, keep=("spec.replicas",)),
            Http(
                "PATCH",
                f"{DEPLOYS}/d",
                [{"op": "replace", "path": "/spec/replicas", "value": NEG}],
                content_type="json",
            ),
        ),
        "replicas < 0 by JSON patch",
    ),
    Scenario(
        "validation/deploy-replicas-negative-strategic-patch-422",
        (
            Http("POST", DEPLOYS, DEPLOY, keep=("spec.replicas",)),
            Http("PATCH", f"{DEPLOYS}/d", {"spec": {"replicas": NEG}}, content_type="strategic"),
        ),
        "replicas < 0 by strategic merge patch",
    ),
    Scenario(
        "validation/deploy-replicas-negative-apply-create-422",
        (
            Http(
                "PATCH",
                f"{DEPLOYS}/d",
                _with(DEPLOY, "spec.replicas", NEG),
                content_type="apply",
                query=APPLY,
            ),
        ),
        "replicas < 0 by server-side apply creating the object",
    ),
    Scenario(
        "validation/deploy-replicas-negative-apply-update-422",
        (
            Http(
                "PATCH",
                f"{DEPLOYS}/d",
                DEPLOY,
                content_type="apply",
                query=APPLY,
                keep=("spec.replicas",),
            ),
            Http(
                "PATCH",
                f"{DEPLOYS}/d",
                _with(DEPLOY, "spec.replicas", NEG),
                content_type="apply",
                query=APPLY,
            ),
        ),
        "replicas < 0 by server-side apply updating the object",
    ),
    Scenario(
        "validation/label-invalid-strategic-patch-422",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{CMS}/a",
                {"metadata": {"labels": {"bad key": "v"}}},
                content_type="strategic",
            ),
        ),
        "metadata validation on a strategic merge patch",
    ),
    Scenario(
        "validation/label-invalid-apply-422",
        (
            Http(
                "PATCH",
                f"{CMS}/a",
                _cm(labels={"k": "a b"}),
                content_type="apply",
                query=APPLY,
            ),
        ),
        "metadata validation on server-side apply",
    ),
    Scenario(
        "validation/label-invalid-json-patch-422",
        (
            Http("POST", CMS, CM, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{CMS}/a",
                [{"op": "add", "path": "/metadata/labels", "value": {"k": "v" * 64}}],
                content_type="json",
            ),
        ),
        "metadata validation on a JSON patch",
    ),
]

# Immutable ConfigMaps and Secrets, on every update path.
IMMUTABLE = [
    Scenario(
        "validation/configmap-immutable-put-422",
        (
            Http("POST", CMS, CM_IMMUTABLE, keep=("immutable",)),
            Http("PUT", f"{CMS}/a", {**CM_IMMUTABLE, "data": {"k": "w"}}),
        ),
        "data of an immutable ConfigMap changed by PUT",
    ),
    Scenario(
        "validation/configmap-immutable-merge-patch-422",
        (
            Http("POST", CMS, CM_IMMUTABLE, keep=("immutable",)),
            Http("PATCH", f"{CMS}/a", {"data": {"k2": "v2"}}, content_type="merge"),
        ),
        "data of an immutable ConfigMap changed by merge patch",
    ),
    Scenario(
        "validation/configmap-immutable-json-patch-422",
        (
            Http("POST", CMS, CM_IMMUTABLE, keep=("immutable",)),
            Http(
                "PATCH",
                f"{CMS}/a",
                [{"op": "remove", "path": "/data/k"}],
                content_type="json",
            ),
        ),
        "data of an immutable ConfigMap changed by JSON patch",
    ),
    Scenario(
        "validation/configmap-immutable-strategic-patch-422",
        (
            Http("POST", CMS, CM_IMMUTABLE, keep=("immutable",)),
            Http("PATCH", f"{CMS}/a", {"binaryData": {"b": "dg=="}}, content_type="strategic"),
        ),
        "binaryData of an immutable ConfigMap changed by strategic merge patch",
    ),
    Scenario(
        "validation/configmap-immutable-apply-422",
        (
            Http(
                "PATCH",
                f"{CMS}/a",
                CM_IMMUTABLE,
                content_type="apply",
                query=APPLY,
                keep=("immutable",),
            ),
            Http(
                "PATCH",
                f"{CMS}/a",
                {**CM_IMMUTABLE, "data": {"k": "w"}},
                content_type="apply",
                query=APPLY,
            ),
        ),
        "data of an immutable ConfigMap changed by server-side apply",
    ),
    Scenario(
        "validation/configmap-immutable-unset-422",
        (
            Http("POST", CMS, CM_IMMUTABLE, keep=("immutable",)),
            Http("PATCH", f"{CMS}/a", {"immutable": False}, content_type="merge"),
        ),
        "immutable: true cannot be turned off",
    ),
    Scenario(
        "validation/configmap-immutable-labels-ok",
        (
            Http("POST", CMS, CM_IMMUTABLE, keep=("immutable",)),
            Http(
                "PATCH",
                f"{CMS}/a",
                {"metadata": {"labels": {"k": "v"}}},
                content_type="merge",
                keep=("metadata.labels", "data", "immutable"),
            ),
        ),
        "metadata of an immutable ConfigMap can still change",
    ),
    Scenario(
        "validation/secret-immutable-data-422",
        (
            Http("POST", SECRETS, SECRET_IMMUTABLE, keep=("immutable",)),
            Http("PATCH", f"{SECRETS}/s", {"data": {"k": "dw=="}}, content_type="merge"),
        ),
        "data of an immutable Secret",
    ),
    Scenario(
        "validation/secret-type-change-422",
        (
            Http("POST", SECRETS, SECRET, keep=("type",)),
            Http("PUT", f"{SECRETS}/s", {**SECRET, "type": "example.com/other"}),
        ),
        "a Secret's type cannot change",
    ),
    Scenario(
        "validation/secret-tls-missing-keys-422",
        (Http("POST", SECRETS, {**SECRET, "type": "kubernetes.io/tls"}),),
        "a kubernetes.io/tls Secret needs tls.crt and tls.key",
    ),
    Scenario(
        "validation/secret-bad-base64-400",
        (Http("POST", SECRETS, {**SECRET, "data": {"k": "not base64!"}}),),
        "Secret data that is not base64: 400 from decoding",
    ),
]

# Immutable parts of workloads and other kinds.
SPEC_IMMUTABLE = [
    Scenario(
        "validation/pod-image-update-ok",
        (
            Http("POST", PODS, POD, keep=("spec.containers.0.image",)),
            Http(
                "PATCH",
                f"{PODS}/p",
                {"spec": {"containers": [{"name": "c", "image": "nginx:1.22"}]}},
                content_type="strategic",
                keep=("spec.containers.0.image",),
            ),
        ),
        "a pod's container image may change",
    ),
    Scenario(
        "validation/pod-ports-update-422",
        (
            Http("POST", PODS, POD_WITH_PORT, keep=("spec.containers.0.ports",)),
            Http(
                "PATCH",
                f"{PODS}/p",
                {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 81}]}]}},
                content_type="strategic",
            ),
        ),
        "a pod's container ports may not change: 422 with the spec diff",
    ),
    Scenario(
        "validation/pod-add-container-422",
        (
            Http("POST", PODS, POD, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{PODS}/p",
                [{"op": "add", "path": "/spec/containers/-", "value": {**CONTAINER, "name": "d"}}],
                content_type="json",
            ),
        ),
        "a container cannot be added to a pod",
    ),
    Scenario(
        "validation/pod-tolerations-add-ok",
        (
            Http("POST", PODS, POD, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{PODS}/p",
                [
                    {
                        "op": "add",
                        "path": "/spec/tolerations/-",
                        "value": {"key": "k", "operator": "Exists", "effect": "NoSchedule"},
                    }
                ],
                content_type="json",
                keep=("spec.tolerations",),
            ),
        ),
        "tolerations may be added to a pod",
    ),
    Scenario(
        "validation/deploy-selector-change-422",
        (
            Http("POST", DEPLOYS, DEPLOY, keep=("spec.selector",)),
            Http(
                "PATCH",
                f"{DEPLOYS}/d",
                {
                    "spec": {
                        "selector": {"matchLabels": {"app": "d", "tier": "t"}},
                        "template": {"metadata": {"labels": {"app": "d", "tier": "t"}}},
                    }
                },
                content_type="strategic",
            ),
        ),
        "a Deployment's selector is immutable (apps/v1)",
    ),
    Scenario(
        "validation/replicaset-selector-change-422",
        (
            Http("POST", RSS, RS, keep=("spec.selector",)),
            Http(
                "PATCH",
                f"{RSS}/rs",
                {
                    "spec": {
                        "selector": {"matchLabels": {"app": "d", "tier": "t"}},
                        "template": {"metadata": {"labels": {"app": "d", "tier": "t"}}},
                    }
                },
                content_type="merge",
            ),
        ),
        "a ReplicaSet's selector is immutable (apps/v1)",
    ),
    Scenario(
        "validation/job-selector-change-422",
        (
            Http("POST", JOBS, JOB, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{JOBS}/j",
                {"spec": {"selector": {"matchLabels": {"a": "b"}}}},
                content_type="merge",
            ),
        ),
        "a Job's selector is immutable",
    ),
    Scenario(
        "validation/job-template-change-422",
        (
            Http("POST", JOBS, JOB, keep=("metadata.name",)),
            Http(
                "PATCH",
                f"{JOBS}/j",
                {"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}},
                content_type="merge",
            ),
        ),
        "a Job's pod template is immutable",
    ),
    Scenario(
        "validation/service-clusterip-change-422",
        (
            Http("POST", SERVICES, SERVICE, keep=("spec.type",)),
            Http(
                "PATCH",
                f"{SERVICES}/svc",
                {"spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"]}},
                content_type="merge",
            ),
        ),
        "a Service's clusterIP may not change once set",
    ),
    Scenario(
        "validation/pvc-spec-change-422",
        (
            Http("POST", PVCS, PVC, keep=("spec.accessModes",)),
            Http(
                "PATCH",
                f"{PVCS}/pvc",
                {"spec": {"accessModes": ["ReadWriteMany"]}},
                content_type="merge",
            ),
        ),
        "a PersistentVolumeClaim's spec is immutable",
    ),
    Scenario(
        "validation/pvc-resize-unbound-422",
        (
            Http("POST", PVCS, PVC, keep=("spec.resources",)),
            Http(
                "PATCH",
                f"{PVCS}/pvc",
                {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
                content_type="merge",
            ),
        ),
        "an unbound claim cannot be resized",
    ),
]

STATUS_RULES = [
    Scenario(
        "validation/deploy-status-put-ignores-spec",
        (
            Http("POST", DEPLOYS, DEPLOY, keep=("spec.replicas",)),
            Http(
                "PUT",
                f"{DEPLOYS}/d/status",
                {
                    **_with(DEPLOY, "spec.replicas", 5),
                    "metadata": {"name": "d", "labels": {"x": "y"}},
                    "status": {"replicas": 1, "observedGeneration": 1},
                },
                keep=("metadata.labels", "metadata.generation", "spec.replicas", "status"),
            ),
        ),
        "PUT to /status changes status only (spec and labels are ignored)",
    ),
    Scenario(
        "validation/deploy-put-ignores-status",
        (
            Http("POST", DEPLOYS, DEPLOY, keep=("spec.replicas",)),
            Http(
                "PUT",
                f"{DEPLOYS}/d",
                {**_with(DEPLOY, "spec.replicas", 2), "status": {"replicas": 7}},
                keep=("metadata.generation", "spec.replicas", "status"),
            ),
        ),
        "PUT to the main resource ignores status",
    ),
    Scenario(
        "validation/deploy-status-on-create-ignored",
        (
            Http(
                "POST",
                DEPLOYS,
                {**DEPLOY, "status": {"replicas": 3, "observedGeneration": 4}},
                keep=("status",),
            ),
        ),
        "status sent on create is dropped",
    ),
    Scenario(
        "validation/pod-status-patch-ignores-spec",
        (
            Http("POST", PODS, POD, keep=("status.phase",)),
            Http(
                "PATCH",
                f"{PODS}/p/status",
                {
                    "spec": {"activeDeadlineSeconds": 5},
                    "status": {"message": "hello", "phase": "Running"},
                },
                content_type="merge",
                keep=("spec.activeDeadlineSeconds", "status.message", "status.phase"),
            ),
        ),
        "a patch to a pod's /status ignores spec",
    ),
    Scenario(
        "validation/pod-status-invalid-422",
        (
            Http("POST", PODS, POD, keep=("status.phase",)),
            Http(
                "PATCH",
                f"{PODS}/p/status",
                {"status": {"podIP": "not-an-ip"}},
                content_type="merge",
            ),
        ),
        "status updates are validated too",
    ),
    Scenario(
        "validation/namespace-put-ignores-status",
        (
            Http(
                "POST",
                "/api/v1/namespaces",
                {"metadata": {"name": "cf-validation-ns-status"}},
                keep=("status",),
            ),
            Http(
                "PATCH",
                "/api/v1/namespaces/cf-validation-ns-status",
                {"status": {"phase": "Terminating"}},
                content_type="merge",
                keep=("status",),
            ),
        ),
        "a namespace's status does not change through the main resource",
        namespace=False,
    ),
]

KINDS = [
    Scenario(
        "validation/deploy-missing-selector-422",
        (Http("POST", DEPLOYS, _with(DEPLOY, "spec.selector", None)),),
        "a Deployment without a selector",
    ),
    Scenario(
        "validation/deploy-selector-mismatch-422",
        (Http("POST", DEPLOYS, _with(DEPLOY, "spec.template.metadata.labels", {"app": "other"})),),
        "a selector that does not match the template's labels",
    ),
    Scenario(
        "validation/deploy-empty-selector-422",
        (Http("POST", DEPLOYS, _with(DEPLOY, "spec.selector", {})),),
        "an empty selector",
    ),
    Scenario(
        "validation/deploy-bad-strategy-422",
        (
            Http(
                "POST",
                DEPLOYS,
                _with(
                    DEPLOY,
                    "spec.strategy",
                    {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}},
                ),
            ),
        ),
        "rollingUpdate with a Recreate strategy",
    ),
    Scenario(
        "validation/service-port-out-of-range-422",
        (Http("POST", SERVICES, _with(SERVICE, "spec.ports", [{"port": 70000}])),),
        "a service port over 65535",
    ),
    Scenario(
        "validation/service-bad-protocol-422",
        (Http("POST", SERVICES, _with(SERVICE, "spec.ports", [{"port": 80, "protocol": "FOO"}])),),
        "an unknown port protocol",
    ),
    Scenario(
        "validation/service-bad-type-422",
        (Http("POST", SERVICES, _with(SERVICE, "spec.type", "Bogus")),),
        "an unknown service type",
    ),
    Scenario(
        "validation/service-no-ports-422",
        (Http("POST", SERVICES, _with(SERVICE, "spec.ports", None)),),
        "a ClusterIP service without ports",
    ),
    Scenario(
        "validation/service-duplicate-ports-422",
        (
            Http(
                "POST",
                SERVICES,
                _with(
                    SERVICE, "spec.ports", [{"name": "a", "port": 80}, {"name": "a", "port": 81}]
                ),
            ),
        ),
        "two ports with one name",
    ),
    Scenario(
        "validation/pod-no-containers-422",
        (Http("POST", PODS, _with(POD, "spec.containers", [])),),
        "a pod without containers",
    ),
    Scenario(
        "validation/pod-duplicate-container-names-422",
        (Http("POST", PODS, _with(POD, "spec.containers", [CONTAINER, CONTAINER])),),
        "two containers with one name",
    ),
    Scenario(
        "validation/pod-bad-restartpolicy-422",
        (Http("POST", PODS, _with(POD, "spec.restartPolicy", "Sometimes")),),
        "an unknown restartPolicy",
    ),
    Scenario(
        "validation/pod-container-no-image-422",
        (Http("POST", PODS, _with(POD, "spec.containers", [{"name": "c"}])),),
        "a container without an image",
    ),
    Scenario(
        "validation/configmap-bad-data-key-422",
        (Http("POST", CMS, {**CM, "data": {"bad key": "v"}}),),
        "a ConfigMap data key with a space",
    ),
    Scenario(
        "validation/configmap-key-in-data-and-binarydata-422",
        (Http("POST", CMS, {**CM, "binaryData": {"k": "dg=="}}),),
        "one key in both data and binaryData",
    ),
    Scenario(
        "validation/lease-bad-fields-422",
        (
            Http(
                "POST",
                LEASES,
                {
                    **LEASE,
                    "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1},
                },
            ),
        ),
        "a Lease with leaseDurationSeconds 0 and leaseTransitions < 0",
    ),
]

SCENARIOS = [*METADATA, *WRITE_PATHS, *IMMUTABLE, *SPEC_IMMUTABLE, *STATUS_RULES, *KINDS]
