"""LoadBalancer Services for the service controller's and the CCM's integration tests."""

from __future__ import annotations

from typing import Any

from kcm.models.core_v1 import Service, ServicePort, ServiceSpec
from kcm.models.meta_v1 import ObjectMeta


def lb_service(name: str = "web", **spec: Any) -> Service:
    """A ``type: LoadBalancer`` Service in ``default`` (port 80/TCP); ``spec`` overrides."""
    spec.setdefault("type", "LoadBalancer")
    return Service(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=ServiceSpec(ports=[ServicePort(port=80, protocol="TCP")], **spec),
    )


def ingress_ips(service: Service) -> list[str | None]:
    """The IPs of ``service``'s ``status.loadBalancer.ingress``, in order."""
    status = service.status.load_balancer if service.status else None
    return [i.ip for i in (status.ingress if status else None) or ()]
