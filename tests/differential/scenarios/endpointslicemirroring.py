"""Hand-written Endpoints of a Service without a selector, mirrored into EndpointSlices."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Delete, Patch, Scenario, Settle
from ._services import service

KINDS = ("endpoints", "endpointslices", "events")


def endpoints(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": name, "labels": {"team": "a"}, "annotations": {"note": "x"}},
        "subsets": [
            {
                "addresses": [{"ip": "192.0.2.1", "hostname": "one"}, {"ip": "192.0.2.2"}],
                "notReadyAddresses": [{"ip": "192.0.2.3"}],
                "ports": [{"name": "https", "port": 443, "protocol": "TCP"}],
            }
        ],
    }


SCENARIOS = [
    Scenario(
        "endpointslicemirroring/custom-endpoints",
        (
            Create(service("ext", None, ports=[{"name": "https", "port": 443}])),
            Create(endpoints("ext")),
            Settle(),
            Patch(
                "endpoints",
                "ext",
                {
                    "subsets": [
                        {
                            "addresses": [{"ip": "192.0.2.9"}],
                            "ports": [{"port": 8443, "protocol": "TCP"}],
                        }
                    ]
                },
            ),
            Settle(),
            Delete("endpoints", "ext"),
            Settle(),
        ),
        kinds=KINDS,
        doc="mirrored with labels and annotations; a changed port set rewrites the slice",
    ),
]
