"""Per-kind strategies: ``metadata.generation`` (which kinds have it, what bumps it) and the
defaults that defaulting, strategies and admission (ServiceAccount, DefaultTolerationSeconds,
Priority) fill in on create."""

from __future__ import annotations

from ..scenario import Http, Scenario, WaitFor

NS = "/api/v1/namespaces/$ns"
APPS = "/apis/apps/v1/namespaces/$ns"
BATCH = "/apis/batch/v1/namespaces/$ns"
CRD_GROUP = "cf-strategy.example.com"
CRD_NAME = f"widgets.{CRD_GROUP}"
WIDGETS = f"/apis/{CRD_GROUP}/v1/namespaces/$ns/widgets"

CONTAINER = {"name": "c", "image": "nginx:1.21"}
POD_SPEC = {"containers": [CONTAINER]}
TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "x"}}
CM = {"metadata": {"name": "cm"}, "data": {"k": "v"}}
SECRET = {"metadata": {"name": "s"}, "stringData": {"k": "v"}, "data": {"d": "dg=="}}
POD = {"metadata": {"name": "p"}, "spec": POD_SPEC}
SERVICE = {
    "metadata": {"name": "svc"},
    "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]},
}
HEADLESS = {
    "metadata": {"name": "headless"},
    "spec": {"clusterIP": "None", "selector": {"app": "x"}, "ports": [{"port": 80}]},
}
EXTERNAL_NAME = {
    "metadata": {"name": "ext"},
    "spec": {"type": "ExternalName", "externalName": "example.com"},
}
NODEPORT = {
    "metadata": {"name": "np"},
    "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30111, "name": "http"}]},
}
NODEPORT_2 = {
    "metadata": {"name": "np"},
    "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30112}]},
}
PVC = {
    "metadata": {"name": "pvc"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}
LEASE = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
DEPLOY = {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}}
RS = {"metadata": {"name": "rs"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}}
STS = {
    "metadata": {"name": "sts"},
    "spec": {"serviceName": "sts", "selector": SELECTOR, "template": TEMPLATE},
}
DS = {"metadata": {"name": "ds"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}}
RC = {"metadata": {"name": "rc"}, "spec": {"template": TEMPLATE}}
JOB_TEMPLATE = {"spec": {**POD_SPEC, "restartPolicy": "Never"}}
JOB = {"metadata": {"name": "j"}, "spec": {"template": JOB_TEMPLATE}}
CRONJOB = {
    "metadata": {"name": "cj"},
    "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {
        "group": CRD_GROUP,
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
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}
WIDGET = {
    "apiVersion": f"{CRD_GROUP}/v1",
    "kind": "Widget",
    "metadata": {"name": "w"},
    "spec": {"size": 1},
}
GEN = ("metadata.generation",)
DEFAULTS = (
    "metadata.generation",
    "metadata.labels",
    "metadata.annotations",
    "metadata.finalizers",
    "spec",
    "status",
)
"""What a defaults scenario compares: all but managedFields (the apply area's subject) and the
values that are always normalised."""


def _merge(path: str, patch: object, keep: tuple[str, ...] = GEN) -> Http:
    return Http("PATCH", path, patch, content_type="merge", keep=keep)


def _pod(name: str, image: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": image}]}}


GENERATION = [
    Scenario(
        "strategy/generation-on-create-by-kind",
        (
            Http("POST", f"{NS}/configmaps", CM, keep=GEN),
            Http("POST", f"{NS}/secrets", SECRET, keep=GEN),
            Http("POST", f"{NS}/pods", POD, keep=GEN),
            Http("POST", f"{NS}/services", HEADLESS, keep=GEN),
            Http("POST", f"{NS}/persistentvolumeclaims", PVC, keep=GEN),
            Http("POST", f"{NS}/replicationcontrollers", RC, keep=GEN),
            Http("POST", f"{APPS}/deployments", DEPLOY, keep=GEN),
            Http("POST", f"{APPS}/replicasets", RS, keep=GEN),
            Http("POST", f"{APPS}/statefulsets", STS, keep=GEN),
            Http("POST", f"{APPS}/daemonsets", DS, keep=GEN),
            Http("POST", f"{BATCH}/jobs", JOB, keep=GEN),
            Http("POST", f"{BATCH}/cronjobs", CRONJOB, keep=GEN),
            Http("POST", "/apis/coordination.k8s.io/v1/namespaces/$ns/leases", LEASE, keep=GEN),
        ),
        "which kinds set metadata.generation on create",
    ),
    Scenario(
        "strategy/generation-deployment-updates",
        (
            Http("POST", f"{APPS}/deployments", DEPLOY, keep=GEN),
            _merge(f"{APPS}/deployments/d", {"metadata": {"labels": {"l": "1"}}}),
            _merge(f"{APPS}/deployments/d", {"metadata": {"annotations": {"a": "1"}}}),
            _merge(f"{APPS}/deployments/d", {"spec": {"replicas": 3}}),
            _merge(f"{APPS}/deployments/d", {"spec": {"replicas": 3}}),
            _merge(
                f"{APPS}/deployments/d/status",
                {"status": {"replicas": 2, "observedGeneration": 3}},
                keep=("metadata.generation", "status"),
            ),
        ),
        "a Deployment's generation: labels no, annotations yes, spec yes, no-op and status no",
    ),
    Scenario(
        "strategy/generation-replicaset-updates",
        (
            Http("POST", f"{APPS}/replicasets", RS, keep=GEN),
            _merge(f"{APPS}/replicasets/rs", {"metadata": {"annotations": {"a": "1"}}}),
            _merge(f"{APPS}/replicasets/rs", {"spec": {"replicas": 2}}),
            _merge(f"{APPS}/replicasets/rs/scale", {"spec": {"replicas": 4}}, keep=("spec",)),
            Http("GET", f"{APPS}/replicasets/rs", keep=("metadata.generation", "spec.replicas")),
        ),
        "a ReplicaSet's generation: annotations no, spec and /scale yes",
    ),
    Scenario(
        "strategy/generation-pod-updates",
        (
            Http("POST", f"{NS}/pods", POD, keep=GEN),
            Http(
                "PATCH",
                f"{NS}/pods/p",
                {"spec": {"containers": [{"name": "c", "image": "nginx:1.22"}]}},
                content_type="strategic",
                keep=GEN,
            ),
        ),
        "a pod's generation on a spec update",
    ),
    Scenario(
        "strategy/generation-configmap-updates",
        (
            Http("POST", f"{NS}/configmaps", CM, keep=GEN),
            _merge(f"{NS}/configmaps/cm", {"data": {"k": "w"}}),
        ),
        "a ConfigMap (no spec) on a data update",
    ),
    Scenario(
        "strategy/generation-custom-resource",
        (
            Http(
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                CRD,
                keep=("metadata.name", "metadata.generation"),
            ),
            WaitFor(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}",
                "status.conditions.[type=Established].status",
                "True",
            ),
            Http("POST", WIDGETS, WIDGET, keep=GEN),
            _merge(f"{WIDGETS}/w", {"metadata": {"labels": {"l": "1"}}}),
            _merge(f"{WIDGETS}/w", {"metadata": {"annotations": {"a": "1"}}}),
            _merge(f"{WIDGETS}/w", {"spec": {"size": 2}}),
            _merge(
                f"{WIDGETS}/w", {"status": {"ok": True}}, keep=("metadata.generation", "status")
            ),
            _merge(
                f"{WIDGETS}/w/status",
                {"status": {"ok": True}},
                keep=("metadata.generation", "status"),
            ),
            _merge(f"{WIDGETS}/w", {"other": 1}, keep=("metadata.generation", "other")),
        ),
        "a custom resource (status subresource): spec bumps generation; metadata, status don't",
        namespace=True,
    ),
    Scenario(
        "strategy/generation-crd-updates",
        (
            Http(
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                {
                    **CRD,
                    "metadata": {"name": f"gadgets.{CRD_GROUP}"},
                    "spec": {
                        **CRD["spec"],  # type: ignore[dict-item]
                        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    },
                },
                keep=GEN,
            ),
            _merge(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{CRD_GROUP}",
                {"metadata": {"labels": {"l": "1"}}},
            ),
            _merge(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{CRD_GROUP}",
                {"spec": {"names": {"shortNames": ["gd"]}}},
            ),
        ),
        "a CustomResourceDefinition's own generation",
        namespace=False,
    ),
]

POD_KEEP = (
    "spec.containers.0.imagePullPolicy",
    "spec.containers.0.terminationMessagePath",
    "spec.containers.0.terminationMessagePolicy",
)

PODS = [
    Scenario(
        "strategy/pod-defaults",
        (Http("POST", f"{NS}/pods", POD, keep=DEFAULTS),),
        "every default a pod gets on create (defaulting, ServiceAccount, tolerations, priority)",
    ),
    Scenario(
        "strategy/pod-image-pull-policy",
        (
            Http("POST", f"{NS}/pods", _pod("untagged", "nginx"), keep=POD_KEEP[:1]),
            Http("POST", f"{NS}/pods", _pod("latest", "nginx:latest"), keep=POD_KEEP[:1]),
            Http("POST", f"{NS}/pods", _pod("tagged", "nginx:1.21"), keep=POD_KEEP[:1]),
            Http(
                "POST",
                f"{NS}/pods",
                _pod("digest", "nginx@sha256:" + "0" * 64),
                keep=POD_KEEP[:1],
            ),
            Http(
                "POST",
                f"{NS}/pods",
                _pod("registry-port", "registry.example.com:5000/nginx"),
                keep=POD_KEEP[:1],
            ),
        ),
        "imagePullPolicy: Always for no tag or :latest, IfNotPresent otherwise",
    ),
    Scenario(
        "strategy/pod-no-automount",
        (
            Http(
                "POST",
                f"{NS}/pods",
                {
                    "metadata": {"name": "p"},
                    "spec": {**POD_SPEC, "automountServiceAccountToken": False},
                },
                keep=(
                    "spec.volumes",
                    "spec.containers.0.volumeMounts",
                    "spec.serviceAccountName",
                    "spec.serviceAccount",
                ),
            ),
        ),
        "automountServiceAccountToken: false: no token volume, the account is still set",
    ),
    Scenario(
        "strategy/pod-missing-serviceaccount-403",
        (
            Http(
                "POST",
                f"{NS}/pods",
                {"metadata": {"name": "p"}, "spec": {**POD_SPEC, "serviceAccountName": "nope"}},
            ),
        ),
        "a pod naming a ServiceAccount that does not exist: ServiceAccount admission refuses",
    ),
    Scenario(
        "strategy/pod-serviceaccount-deprecated-field",
        (
            Http(
                "POST",
                f"{NS}/pods",
                {"metadata": {"name": "p"}, "spec": {**POD_SPEC, "serviceAccount": "default"}},
                keep=("spec.serviceAccountName", "spec.serviceAccount"),
            ),
        ),
        "the deprecated serviceAccount field fills serviceAccountName",
    ),
    Scenario(
        "strategy/pod-status-reset-on-create",
        (
            Http(
                "POST",
                f"{NS}/pods",
                {**POD, "status": {"phase": "Running", "podIP": "10.1.1.1", "message": "m"}},
                keep=("status",),
            ),
        ),
        "status sent on create becomes Pending with a qosClass",
    ),
    Scenario(
        "strategy/pod-qos-guaranteed-requests-from-limits",
        (
            Http(
                "POST",
                f"{NS}/pods",
                {
                    "metadata": {"name": "p"},
                    "spec": {
                        "containers": [
                            {**CONTAINER, "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
                        ]
                    },
                },
                keep=("spec.containers.0.resources", "status.qosClass"),
            ),
        ),
        "limits only: requests default to the limits and the pod is Guaranteed",
    ),
    Scenario(
        "strategy/pod-own-tolerations",
        (
            Http(
                "POST",
                f"{NS}/pods",
                {
                    "metadata": {"name": "p"},
                    "spec": {
                        **POD_SPEC,
                        "tolerations": [
                            {
                                "key": "node.kubernetes.io/not-ready",
                                "operator": "Exists",
                                "effect": "NoExecute",
                                "tolerationSeconds": 10,
                            }
                        ],
                    },
                },
                keep=("spec.tolerations",),
            ),
        ),
        "DefaultTolerationSeconds adds only the tolerations the pod does not have",
    ),
    Scenario(
        "strategy/pod-dns-policy-host-network",
        (
            Http(
                "POST",
                f"{NS}/pods",
                {"metadata": {"name": "p"}, "spec": {**POD_SPEC, "hostNetwork": True}},
                keep=(
                    "spec.dnsPolicy",
                    "spec.containers.0.ports",
                    "spec.hostNetwork",
                ),
            ),
        ),
        "hostNetwork pods: dnsPolicy default",
    ),
]

SVC_KEEP = (
    "spec.type",
    "spec.ports",
    "spec.sessionAffinity",
    "spec.ipFamilies",
    "spec.ipFamilyPolicy",
    "spec.internalTrafficPolicy",
    "spec.externalTrafficPolicy",
    "status",
)

SERVICES = [
    Scenario(
        "strategy/service-clusterip-defaults",
        (Http("POST", f"{NS}/services", SERVICE, keep=SVC_KEEP),),
        "a ClusterIP service's defaults (the allocated IP is not compared)",
    ),
    Scenario(
        "strategy/service-headless-defaults",
        (Http("POST", f"{NS}/services", HEADLESS, keep=DEFAULTS),),
        "a headless service, whole",
    ),
    Scenario(
        "strategy/service-externalname-defaults",
        (Http("POST", f"{NS}/services", EXTERNAL_NAME, keep=DEFAULTS),),
        "an ExternalName service, whole",
    ),
    Scenario(
        "strategy/service-nodeport-defaults",
        (Http("POST", f"{NS}/services", NODEPORT, keep=SVC_KEEP),),
        "a NodePort service with a chosen nodePort",
    ),
    Scenario(
        "strategy/service-nodeport-taken-422",
        (
            Http("POST", f"{NS}/services", NODEPORT_2, keep=("spec.ports",)),
            Http("POST", f"{NS}/services", {**NODEPORT_2, "metadata": {"name": "np2"}}),
        ),
        "a nodePort already allocated",
    ),
    Scenario(
        "strategy/service-nodeport-out-of-range-422",
        (
            Http(
                "POST",
                f"{NS}/services",
                {
                    "metadata": {"name": "np"},
                    "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]},
                },
            ),
        ),
        "a nodePort outside the node port range",
    ),
]

WORKLOADS = [
    Scenario(
        "strategy/deployment-defaults",
        (Http("POST", f"{APPS}/deployments", DEPLOY, keep=DEFAULTS),),
        "a Deployment's defaults (strategy, revisionHistoryLimit, progressDeadlineSeconds, ...)",
    ),
    Scenario(
        "strategy/replicaset-defaults",
        (Http("POST", f"{APPS}/replicasets", RS, keep=DEFAULTS),),
        "a ReplicaSet's defaults",
    ),
    Scenario(
        "strategy/statefulset-defaults",
        (Http("POST", f"{APPS}/statefulsets", STS, keep=DEFAULTS),),
        "a StatefulSet's defaults",
    ),
    Scenario(
        "strategy/daemonset-defaults",
        (Http("POST", f"{APPS}/daemonsets", DS, keep=DEFAULTS),),
        "a DaemonSet's defaults",
    ),
    Scenario(
        "strategy/replicationcontroller-defaults",
        (Http("POST", f"{NS}/replicationcontrollers", RC, keep=("metadata.labels", "spec")),),
        "a ReplicationController: selector and labels from the template, replicas 1",
    ),
    Scenario(
        "strategy/job-defaults",
        (Http("POST", f"{BATCH}/jobs", JOB, keep=DEFAULTS),),
        "a Job's defaults: generated selector and labels (controller-uid), completions, ...",
    ),
    Scenario(
        "strategy/job-manual-selector",
        (
            Http(
                "POST",
                f"{BATCH}/jobs",
                {
                    "metadata": {"name": "j"},
                    "spec": {
                        "manualSelector": True,
                        "selector": SELECTOR,
                        "template": {**JOB_TEMPLATE, "metadata": {"labels": {"app": "x"}}},
                    },
                },
                keep=("spec.selector", "spec.template.metadata.labels", "metadata.labels"),
            ),
        ),
        "manualSelector: the selector and labels are the client's",
    ),
    Scenario(
        "strategy/cronjob-defaults",
        (Http("POST", f"{BATCH}/cronjobs", CRONJOB, keep=DEFAULTS),),
        "a CronJob's defaults",
    ),
]

OTHERS = [
    Scenario(
        "strategy/namespace-defaults",
        (
            Http(
                "POST",
                "/api/v1/namespaces",
                {"metadata": {"name": "cf-strategy-ns-defaults"}},
                keep=DEFAULTS,
            ),
        ),
        "a namespace: the kubernetes.io/metadata.name label, spec.finalizers, phase Active",
        namespace=False,
    ),
    Scenario(
        "strategy/namespace-name-label-enforced",
        (
            Http(
                "POST",
                "/api/v1/namespaces",
                {
                    "metadata": {
                        "name": "cf-strategy-ns-label",
                        "labels": {"kubernetes.io/metadata.name": "other"},
                    }
                },
                keep=("metadata.labels",),
            ),
            _merge(
                "/api/v1/namespaces/cf-strategy-ns-label",
                {"metadata": {"labels": {"kubernetes.io/metadata.name": None}}},
                keep=("metadata.labels",),
            ),
        ),
        "the kubernetes.io/metadata.name label cannot be changed or removed",
        namespace=False,
    ),
    Scenario(
        "strategy/secret-defaults",
        (
            Http(
                "POST", f"{NS}/secrets", SECRET, keep=(*DEFAULTS[:4], "type", "data", "stringData")
            ),
        ),
        "a Secret: type Opaque, stringData merged into data",
    ),
    Scenario(
        "strategy/pvc-defaults",
        (Http("POST", f"{NS}/persistentvolumeclaims", PVC, keep=DEFAULTS),),
        "a PersistentVolumeClaim: volumeMode Filesystem, phase Pending",
    ),
]

SCENARIOS = [*GENERATION, *PODS, *SERVICES, *WORKLOADS, *OTHERS]
