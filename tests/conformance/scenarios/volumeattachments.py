"""VolumeAttachments as the attach/detach controller writes them: created unattached, status
kept on updates of the object and written through ``/status``."""

from __future__ import annotations

from ..scenario import Http, Scenario

VAS = "/apis/storage.k8s.io/v1/volumeattachments"
VA = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "VolumeAttachment",
    "metadata": {"name": "volumeattachments-created"},
    "spec": {
        "attacher": "csi.example.com",
        "nodeName": "node-1",
        "source": {"persistentVolumeName": "pv-1"},
    },
    "status": {"attached": True},
}

SCENARIOS = [
    Scenario(
        "volumeattachments/created-unattached",
        (
            Http("POST", VAS, VA, keep=("spec", "status")),
            Http(
                "PATCH",
                f"{VAS}/volumeattachments-created/status",
                {"status": {"attached": True, "attachmentMetadata": {"k": "v"}}},
                content_type="merge",
                keep=("status",),
            ),
            Http(
                "PATCH",
                f"{VAS}/volumeattachments-created",
                {"metadata": {"labels": {"a": "b"}}, "status": {"attached": False}},
                content_type="merge",
                keep=("metadata.labels", "status"),
            ),
        ),
        "a posted status is dropped (attached false); /status writes it; the object keeps it",
    ),
    Scenario(
        "volumeattachments/attacher-not-a-csi-driver-name-422",
        (
            Http(
                "POST",
                VAS,
                {
                    **VA,
                    "metadata": {"name": "volumeattachments-bad-attacher"},
                    "spec": {**VA["spec"], "attacher": "kcm.dev/simulated"},
                },
            ),
        ),
        "an attacher must be a CSI driver name (a DNS subdomain): no slash",
    ),
]
