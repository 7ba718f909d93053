"""Endpoints and EndpointSlices of Services with a selector (the endpoint and endpointslice
controllers together: both follow the same pods)."""

from __future__ import annotations

from ..scenario import Create, Delete, Kubelet, Scenario, Settle
from ._services import bound_pod, node, service

KINDS = ("endpoints", "endpointslices", "events")

SCENARIOS = [
    Scenario(
        "endpoint/ready-not-ready-terminating",
        (
            Create(node("df-ep-node-1")),
            Create(service("web", {"app": "web"}, labels={"tier": "front"})),
            Create(bound_pod("a", "df-ep-node-1")),
            Create(bound_pod("b", "df-ep-node-1")),
            Create(bound_pod("c", "df-ep-node-1")),
            Settle(),
            # one pod at a time: two changes in one breath are one write or two (a slice's
            # generation) depending on whether the controller synced in between
            Kubelet("pod=a", ips=True),
            Settle(),
            Kubelet("pod=b", ips=True),
            Settle(),
            Kubelet("pod=c", ready=False, ips=True),
            Settle(),
            Delete("pods", "a"),
            Settle(),
        ),
        kinds=KINDS,
        doc="no IPs yet; two ready, one not ready; a deleted pod stays terminating",
    ),
    Scenario(
        "endpoint/named-ports-and-hostnames",
        (
            Create(node("df-ep-node-2")),
            Create(
                service(
                    "svc",
                    {"app": "web"},
                    ports=[
                        {"name": "http", "port": 80, "targetPort": "web"},
                        {"name": "metrics", "port": 9090, "targetPort": 9090},
                    ],
                )
            ),
            Create(bound_pod("a", "df-ep-node-2", ports=[{"name": "web", "containerPort": 8080}])),
            Create(
                bound_pod(
                    "b",
                    "df-ep-node-2",
                    ports=[{"name": "web", "containerPort": 8081}],
                    hostname="bee",
                    subdomain="svc",
                )
            ),
            Create(bound_pod("c", "df-ep-node-2")),
            Kubelet("app=web", ips=True),
            Settle(),
        ),
        kinds=KINDS,
        doc="a named target port resolves per pod (c has none); b's hostname is published",
    ),
    Scenario(
        "endpoint/headless-publishes-not-ready",
        (
            Create(node("df-ep-node-3")),
            Create(
                service(
                    "headless",
                    {"app": "web"},
                    clusterIP="None",
                    ipFamilies=["IPv4"],  # what kube-apiserver defaults
                    ports=[],
                    publishNotReadyAddresses=True,
                )
            ),
            Create(bound_pod("a", "df-ep-node-3")),
            Create(bound_pod("b", "df-ep-node-3")),
            Kubelet("pod=a", ips=True),
            Kubelet("pod=b", ready=False, ips=True),
            Settle(),
        ),
        kinds=KINDS,
    ),
    Scenario(
        "endpoint/service-deleted",
        (
            Create(node("df-ep-node-4")),
            Create(service("web", {"app": "web"})),
            Create(bound_pod("a", "df-ep-node-4")),
            Kubelet("app=web", ips=True),
            Settle(),
            Delete("services", "web"),
            Settle(),
        ),
        kinds=KINDS,
        doc="its Endpoints are deleted, its EndpointSlices go with the garbage collector",
    ),
]
