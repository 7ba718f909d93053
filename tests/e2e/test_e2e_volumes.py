"""``kcm`` in embedded mode with a CSI volume of the simulated driver, driven with kubectl: the
pod waits for its VolumeAttachment, which the attach/detach controller creates and the
simulated attacher attaches; the node reports the volume; deleting the pod detaches it; growing
the claim shows the new size in ``kubectl get pvc``. The claim is bound by hand (a
pre-bound PV and ``kubectl patch --subresource=status``), as persistentvolume-binder is not
what this shows."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.e2e_harness import Kubectl, Process, embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl

OBJECTS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: e2e-grows}
provisioner: simulated.kcm.dev
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: e2e-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: e2e-grows
  csi: {driver: simulated.kcm.dev, volumeHandle: e2e-handle}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: e2e-grows
  volumeName: e2e-pv
  resources: {requests: {storage: 1Gi}}
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: user, namespace: default}
spec:
  nodeName: kcm-node-1
  containers: [{name: main, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"""

UNIQUE = "kubernetes.io/csi/simulated.kcm.dev^e2e-handle"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Kubectl]]:
    with embedded_kcm(tmp_path_factory.mktemp("e2e-volumes")) as running:
        yield running
        process, _ = running
        assert process.stop() == 0, process.logs()


def test_a_csi_volume_is_attached_used_detached_and_grown(
    cluster: tuple[Process, Kubectl],
) -> None:
    _, kubectl = cluster
    kubectl.run("apply", "-f", "-", input=OBJECTS)
    claim_uid = kubectl.json("get", "pvc", "data")["metadata"]["uid"]
    ref = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data"}
    kubectl.run(
        "patch", "pv", "e2e-pv", "--type=merge", "-p",
        json.dumps({"spec": {"claimRef": {**ref, "uid": claim_uid}}}),
    )  # fmt: skip
    for kind, name, status in (
        ("pv", "e2e-pv", {"phase": "Bound"}),
        ("pvc", "data", {"phase": "Bound", "capacity": {"storage": "1Gi"}}),
    ):
        kubectl.run(
            "patch", kind, name, "--subresource=status", "--type=merge", "-p",
            json.dumps({"status": status}),
        )  # fmt: skip
    assert kubectl.json("get", "csidriver", "simulated.kcm.dev")["spec"]["attachRequired"]
    assert kubectl.json("get", "csinode", "kcm-node-1")["spec"]["drivers"][0]["name"] == (
        "simulated.kcm.dev"
    )

    kubectl.run("apply", "-f", "-", input=POD)

    def running() -> bool:
        return kubectl.json("get", "pod", "user")["status"].get("phase") == "Running"

    wait_for("the pod to run once its volume is attached", running)
    [attachment] = kubectl.items("volumeattachments")
    assert attachment["metadata"]["name"].startswith("csi-")
    assert attachment["spec"] == {
        "attacher": "simulated.kcm.dev",
        "nodeName": "kcm-node-1",
        "source": {"persistentVolumeName": "e2e-pv"},
    }
    assert attachment["status"]["attached"] is True

    def reported() -> bool:
        status = kubectl.json("get", "node", "kcm-node-1")["status"]
        attached = [v["name"] for v in status.get("volumesAttached") or ()]
        return attached == [UNIQUE] and status.get("volumesInUse") == [UNIQUE]

    wait_for("the node to report the volume attached and in use", reported)

    def attach_event() -> bool:
        events = kubectl.run("get", "events", "--field-selector", "involvedObject.name=user")
        return "SuccessfulAttachVolume" in events

    wait_for("the SuccessfulAttachVolume event", attach_event)

    kubectl.run("delete", "pod", "user", "--wait=false")
    wait_for("the volume to be detached", lambda: not kubectl.items("volumeattachments"))

    kubectl.run(
        "patch", "pvc", "data", "--type=merge", "-p",
        json.dumps({"spec": {"resources": {"requests": {"storage": "3Gi"}}}}),
    )  # fmt: skip

    def grown() -> str | None:
        out = kubectl.run("get", "pvc", "data", "-o", "jsonpath={.status.capacity.storage}")
        return out if out == "3Gi" else None

    wait_for("kubectl get pvc to show the new size", grown)
    assert kubectl.json("get", "pv", "e2e-pv")["spec"]["capacity"]["storage"] == "3Gi"
    with pytest.raises(AssertionError, match="field can not be less than previous value"):
        kubectl.run(
            "patch", "pvc", "data", "--type=merge", "-p",
            json.dumps({"spec": {"resources": {"requests": {"storage": "1Gi"}}}}),
        )  # fmt: skip
