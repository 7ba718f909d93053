"""StatefulSets: ordered identities, claims, scale down, failed pods, rolling updates with a
partition, OnDelete, minReadySeconds, adoption, revision history, rollback and collisions."""

from __future__ import annotations

from typing import Any

from kcm.controllerkit import controller_revision_name, hash_controller_revision
from kcm.models.apps_v1 import ControllerRevision

from ..scenario import Create, Delete, Kubelet, Patch, Scenario, Settle, Until
from ._objects import bare_pod, pod_template
from ._steps import made_ready

KINDS = ("statefulsets", "pods", "controllerrevisions", "events")
WITH_CLAIMS = ("statefulsets", "pods", "persistentvolumeclaims", "controllerrevisions", "events")


def statefulset(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    """A StatefulSet with every field kube-apiserver defaults written out (the embedded server
    defaults none of them yet), so the snapshots compare the controllers, not the servers."""
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template(name),
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "revisionHistoryLimit": 10,
            **spec,
        },
    }


def claim_template(name: str) -> dict[str, Any]:
    """Claims stay Pending (the cluster has no provisioner); pre-bound to a volume that does
    not exist, so the persistent volume binder leaves them so without events of its own."""
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeMode": "Filesystem",
            "volumeName": "no-such-volume",
        },
        "status": {"phase": "Pending"},
    }


def image(tag: str) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": tag}]}}}}


def partitioned(patch: dict[str, Any], partition: int) -> dict[str, Any]:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}}
    return {"spec": {**patch["spec"], "updateStrategy": strategy}}


def pod(name: str) -> str:
    """The selector of one pod by the label StatefulSet pods carry."""
    return f"statefulset.kubernetes.io/pod-name={name}"


def rolled_to(*tags: str) -> tuple[Patch | Kubelet | Settle, ...]:
    """The one-pod set ``web`` rolled to each image in turn, its new pod made Ready each time."""
    steps: list[Patch | Kubelet | Settle] = []
    for tag in tags:
        steps += [Patch("statefulsets", "web", image(tag)), Settle(), *made_ready("web")]
    return tuple(steps)


def _colliding_revision() -> dict[str, Any]:
    """A ControllerRevision squatting on the name of the first revision of
    ``statefulset("web", 1)`` (the hash of its template as kube-apiserver defaults it, with
    collision count 0), holding other data: the controller must count a collision and take
    the next name. Its labels do not match the set's selector, so nobody adopts it."""
    container = {
        "image": "nginx:1.25",
        "imagePullPolicy": "IfNotPresent",
        "name": "main",
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    template = {
        "$patch": "replace",
        "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
        "spec": {
            "containers": [container],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30,
        },
    }
    expected = ControllerRevision(data={"spec": {"template": template}})
    name = controller_revision_name("web", hash_controller_revision(expected, 0))
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "labels": {"app": "squatter"}},
        "data": {"squatter": True},
        "revision": 1,
    }


SCENARIOS = [
    Scenario(
        "statefulset/ordered-ready-create",
        (Create(statefulset("web", 3)), Settle(), *made_ready("web", 3)),
        kinds=KINDS,
        doc="OrderedReady: web-0, then web-1 once web-0 is Running and Ready, then web-2",
    ),
    Scenario(
        "statefulset/parallel-create-and-scale-down",
        (
            Create(statefulset("web", 3, podManagementPolicy="Parallel")),
            Settle(),
            Kubelet("app=web", count=1),
            Settle(),
            Patch("statefulsets", "web", {"spec": {"replicas": 1}}),
            Settle(),
        ),
        kinds=KINDS,
        doc="Parallel: all pods at once, whatever their readiness; scale down deletes both",
    ),
    Scenario(
        "statefulset/claims-before-pods",
        (
            Create(statefulset("web", 2, volumeClaimTemplates=[claim_template("data")])),
            Settle(),
            *made_ready("web", 2),
        ),
        kinds=WITH_CLAIMS,
        doc="a claim per pod, created first and left Pending (no provisioner): pods still come",
    ),
    Scenario(
        "statefulset/scale-down-one-at-a-time",
        (
            Create(statefulset("web", 3)),
            Settle(),
            *made_ready("web", 3),
            Kubelet(pod("web-0"), ready=False),
            Settle(),
            Patch("statefulsets", "web", {"spec": {"replicas": 1}}),
            Settle(),
            Kubelet(pod("web-0")),
            Settle(),
        ),
        kinds=KINDS,
        doc="scale down waits while web-0 is not ready, then removes web-2 and then web-1",
    ),
    Scenario(
        "statefulset/recreates-deleted-pod",
        (
            Create(statefulset("web", 2, volumeClaimTemplates=[claim_template("data")])),
            Settle(),
            *made_ready("web", 2),
            Delete("pods", "web-1"),
            Settle(),
        ),
        kinds=WITH_CLAIMS,
        doc="a deleted pod comes back with its name, hostname and claim",
    ),
    Scenario(
        "statefulset/recreates-failed-pod",
        (
            Create(statefulset("web", 2)),
            Settle(),
            *made_ready("web", 2),
            Kubelet(pod("web-1"), phase="Failed", exit_code=1),
            Settle(),
        ),
        kinds=KINDS,
        doc="a Failed pod is deleted and created again (RecreatingFailedPod)",
    ),
    Scenario(
        "statefulset/rolling-update-with-partition",
        (
            Create(statefulset("web", 3)),
            Settle(),
            *made_ready("web", 3),
            Patch("statefulsets", "web", partitioned(image("nginx:1.26"), 2)),
            Settle(),
            *made_ready("web"),
            Patch("statefulsets", "web", partitioned({"spec": {}}, 0)),
            Settle(),
            *made_ready("web", 2),
        ),
        kinds=KINDS,
        doc="partition 2 replaces only web-2; partition 0 then web-1 and web-0, in that order",
    ),
    Scenario(
        "statefulset/on-delete",
        (
            Create(statefulset("web", 2, updateStrategy={"type": "OnDelete"})),
            Settle(),
            *made_ready("web", 2),
            Patch("statefulsets", "web", image("nginx:1.26")),
            Settle(),
            Delete("pods", "web-0"),
            Settle(),
            *made_ready("web"),
        ),
        kinds=KINDS,
        doc="OnDelete replaces nothing until a pod is deleted; it returns at the new revision",
    ),
    Scenario(
        "statefulset/min-ready-seconds",
        (
            Create(statefulset("web", 2, minReadySeconds=10)),
            Settle(),
            Kubelet("app=web"),
            Settle(),  # well within the 10 s: web-0 Ready, not available, no web-1
            Until("pods", 2),  # the state, not a time: web-1 once web-0 is available
            Settle(),
        ),
        kinds=KINDS,
        doc="web-1 waits until web-0 has been Ready for minReadySeconds (available)",
    ),
    Scenario(
        "statefulset/adopts-orphans-by-name",
        (
            Create(bare_pod("web-1", "web")),
            Create(bare_pod("web-extra", "web")),
            Create(statefulset("web", 2)),
            Settle(),
            *made_ready("web", 3),
        ),
        kinds=KINDS,
        doc="an orphan named web-1 is adopted, labelled and replaced at the set's revision; "
        "web-extra is not its name and is left alone",
    ),
    Scenario(
        "statefulset/revision-history-limit",
        (
            Create(statefulset("web", 1, revisionHistoryLimit=1)),
            Settle(),
            *made_ready("web", 1),
            *rolled_to("nginx:1.26", "nginx:1.27"),
        ),
        kinds=KINDS,
        doc="three templates, history limit 1: the oldest revision is deleted",
    ),
    Scenario(
        "statefulset/rollback-renumbers-the-old-revision",
        (
            Create(statefulset("web", 1)),
            Settle(),
            *made_ready("web", 1),
            *rolled_to("nginx:1.26", "nginx:1.25"),
        ),
        kinds=KINDS,
        doc="going back to the first template reuses its revision, renumbered 3",
    ),
    Scenario(
        "statefulset/revision-name-collision",
        (Create(_colliding_revision()), Create(statefulset("web", 1)), Settle()),
        kinds=KINDS,
        doc="the revision name is taken by other data: collisionCount 1 and the next name",
    ),
]
