"""What the service (load-balancer) controller relies on: the cleanup finalizer added and
removed through a strategic-merge patch of ``services/status`` (metadata changes through the
status subresource), ``status.loadBalancer`` written and cleared with a merge patch, and a
deleted Service kept until the finalizer goes."""

from __future__ import annotations

from ..scenario import Http, Scenario

NS = "/api/v1/namespaces/$ns"
FINALIZER = "service.kubernetes.io/load-balancer-cleanup"
LB = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
STATUS = f"{NS}/services/lb/status"
KEEP = ("metadata.finalizers", "status")

SCENARIOS = [
    Scenario(
        "loadbalancer/finalizer-and-status-through-status-subresource",
        (
            Http("POST", f"{NS}/services", LB, keep=("spec.type", "status")),
            Http(
                "PATCH",
                STATUS,
                {"metadata": {"finalizers": [FINALIZER]}},
                content_type="strategic",
                keep=KEEP,
            ),
            Http(
                "PATCH",
                STATUS,
                {"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}},
                content_type="merge",
                keep=KEEP,
            ),
            Http(
                "PATCH",
                STATUS,
                {"status": {"loadBalancer": {"ingress": None}}},
                content_type="merge",
                keep=KEEP,
            ),
            Http("DELETE", f"{NS}/services/lb", keep=("metadata.finalizers",)),
            Http("GET", f"{NS}/services/lb", keep=("metadata.finalizers",)),
            Http(
                "PATCH",
                STATUS,
                {"metadata": {"$deleteFromPrimitiveList/finalizers": [FINALIZER]}},
                content_type="strategic",
                keep=KEEP,
            ),
            Http("GET", f"{NS}/services/lb"),
        ),
        "the service controller's finalizer and status writes, and deletion held by the finalizer",
    ),
]
