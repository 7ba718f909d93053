"""Volume expansion (``persistentvolume-expander``): a bound CSI claim of a class that allows
expansion grows; kube-controller-manager leaves it to the driver's external resizer with a
Warning ``ExternalExpanding`` (no resizer runs, so the size stays)."""

from __future__ import annotations

from ..scenario import BindVolume, Create, Patch, Scenario, Settle
from .attachdetach import claim, volume

CLASS = "df-expand-grows"

SCENARIOS = [
    Scenario(
        "expand/csi-claim-grown-is-left-to-the-resizer",
        (
            Create(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": {"name": CLASS},
                    "provisioner": "resize.df.example.com",
                    "allowVolumeExpansion": True,
                    "volumeBindingMode": "Immediate",
                }
            ),
            Create(
                {
                    **volume("df-expand-pv", "resize.df.example.com"),
                    "spec": {
                        **volume("df-expand-pv", "resize.df.example.com")["spec"],
                        "storageClassName": CLASS,
                    },
                }
            ),
            Create(
                {
                    **claim("data", "df-expand-pv"),
                    "spec": {**claim("data", "df-expand-pv")["spec"], "storageClassName": CLASS},
                }
            ),
            BindVolume("data", "df-expand-pv"),
            Settle(),
            Patch(
                "persistentvolumeclaims",
                "data",
                {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
            ),
            Settle(),
        ),
        kinds=("persistentvolumeclaims", "events"),
        doc="The request grows to 2Gi; capacity stays 1Gi; one ExternalExpanding warning.",
    ),
]
