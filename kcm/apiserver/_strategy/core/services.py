"""Services: DNS-1035 names, port checks, and a cluster IP and node ports on create."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause, duplicate, invalid, not_supported, required
from ..._names import dns1035_label, dns1123_label
from ..._store import Obj
from .._base import Strategy
from .._context import Context

__all__ = ["ServiceStrategy"]

_NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


class ServiceStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/service`` (allocation from :class:`Context`)."""

    return_deleted_object = True

    @staticmethod
    def name_rule(name: str) -> list[str]:
        return dns1035_label(name)

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + _validate_service(obj)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        addresses = ctx.service_addresses
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec["type"] != "ExternalName" and not spec.get("clusterIP"):
            ip = addresses.cluster_ip()
            spec["clusterIP"] = ip
            spec["clusterIPs"] = [ip]
        node_ports = spec["type"] in _NODE_PORT_TYPES
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                port.setdefault("targetPort", port.get("port"))
                if node_ports and not port.get("nodePort"):
                    port["nodePort"] = addresses.node_port()
        if node_ports:
            spec.setdefault("externalTrafficPolicy", "Cluster")
        obj["status"] = {"loadBalancer": {}}


def _validate_service(obj: Mapping[str, Any]) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        spec = {}
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if not ports:
        if headless or spec.get("type") == "ExternalName":
            return []
        return [required("spec.ports")]
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        path = f"spec.ports[{i}]"
        if not isinstance(port, Mapping):
            causes.append(invalid(path, port, "must be an object"))
            continue
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            causes.append(required(f"{path}.name"))
        elif name:
            causes.extend(invalid(f"{path}.name", name, msg) for msg in dns1123_label(name))
            if name in names:
                causes.append(duplicate(f"{path}.name", name))
            names.add(name)
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            causes.append(invalid(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
            causes.append(not_supported(f"{path}.protocol", protocol, ["SCTP", "TCP", "UDP"]))
    return causes
