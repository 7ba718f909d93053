"""Services: DNS-1035 names, the scheme defaults, IP families, and cluster IPs and node ports
allocated on create and kept on update, as kube-apiserver's service registry does (a
single-stack IPv4 cluster)."""

from __future__ import annotations

import ipaddress
from typing import Final

from ..._field_errors import Cause, invalid
from ..._names import dns1035_label
from ..._status import StatusError
from ..._store import Obj
from .._base import Strategy
from .._context import Context
from .addresses import NODE_PORT_RANGE, SERVICE_CIDR, used_cluster_ips, used_node_ports
from .servicevalidation import validate_service_spec, validate_service_update

__all__ = ["ServiceStrategy"]

_NODE_PORT_TYPES: Final = ("NodePort", "LoadBalancer")
_CLIENT_IP_TIMEOUT: Final = 10800
_RANGE: Final = f"{NODE_PORT_RANGE.start}-{NODE_PORT_RANGE.stop - 1}"


def _needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type") != "ExternalName"


def _needs_node_ports(spec: Obj) -> bool:
    if spec.get("type") == "NodePort":
        return True
    return (
        spec.get("type") == "LoadBalancer"
        and spec.get("allocateLoadBalancerNodePorts") is not False
    )


class ServiceStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/service`` (allocation from :class:`Context`)."""

    return_deleted_object = True

    @staticmethod
    def name_rule(name: str) -> list[str]:
        return dns1035_label(name)

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + validate_service_spec(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return (
            self.validate_metadata_update(new, old)
            + validate_service_update(new, old)
            + self.validate(new)
        )

    def default(self, obj: Obj) -> None:
        """``SetDefaults_Service``."""
        spec = obj.setdefault("spec", {})
        spec.setdefault("sessionAffinity", "None")
        if spec["sessionAffinity"] == "None":
            spec.pop("sessionAffinityConfig", None)
        elif spec["sessionAffinity"] == "ClientIP":
            config = spec.get("sessionAffinityConfig") or {}
            if (config.get("clientIP") or {}).get("timeoutSeconds") is None:
                timeout = {"timeoutSeconds": _CLIENT_IP_TIMEOUT}
                spec["sessionAffinityConfig"] = {"clientIP": timeout}
        if not spec.get("type"):
            spec["type"] = "ClusterIP"
        for port in spec.get("ports") or []:
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
        if spec["type"] in _NODE_PORT_TYPES and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        spec.setdefault("internalTrafficPolicy", "Cluster")
        if spec["type"] == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        spec = obj["spec"]
        if spec.get("clusterIP") and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [spec["clusterIP"]]
        services = list(ctx.store.items(self.resource.storage_key))
        name = obj["metadata"].get("name") or ""
        if _needs_cluster_ip(spec):
            _init_ip_families(spec, name)
            _allocate_cluster_ip(spec, name, used_cluster_ips(services), ctx)
        if _needs_node_ports(spec):
            _allocate_node_ports(spec, name, used_node_ports(services), set(), ctx)
        obj["status"] = {"loadBalancer": {}}

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        """Values the server allocated and the client left out are kept."""
        new = super().prepare_for_update(new, old)
        spec, before = new.setdefault("spec", {}), old.get("spec") or {}
        if _needs_cluster_ip(spec) and _needs_cluster_ip(before):
            if not spec.get("clusterIP"):
                spec["clusterIP"] = before.get("clusterIP")
            if not spec.get("clusterIPs") and before.get("clusterIPs"):
                spec["clusterIPs"] = before["clusterIPs"]
            if spec.get("ipFamilyPolicy") is None and before.get("ipFamilyPolicy") is not None:
                spec["ipFamilyPolicy"] = before["ipFamilyPolicy"]
            if not spec.get("ipFamilies") and before.get("ipFamilies"):
                spec["ipFamilies"] = before["ipFamilies"]
        if _needs_node_ports(spec) and _needs_node_ports(before):
            by_name = {p.get("name", ""): p.get("nodePort") for p in before.get("ports") or []}
            for port in spec.get("ports") or []:
                if not port.get("nodePort") and by_name.get(port.get("name", "")):
                    port["nodePort"] = by_name[port.get("name", "")]
        if spec.get("type") != "LoadBalancer":
            new.setdefault("status", {})["loadBalancer"] = {}
        return new


def _init_ip_families(spec: Obj, name: str) -> None:
    """IP family fields on a single-stack IPv4 cluster (``initIPFamilyFields``)."""
    headless_selectorless = spec.get("clusterIP") == "None" and not spec.get("selector")
    if spec.get("ipFamilyPolicy") is None:
        spec["ipFamilyPolicy"] = "RequireDualStack" if headless_selectorless else "SingleStack"
    families = list(spec.get("ipFamilies") or [])
    for i, ip in enumerate(spec.get("clusterIPs") or []):
        if ip == "None":
            break
        if i >= len(families):
            families.append("IPv6" if ":" in str(ip) else "IPv4")
    if headless_selectorless:
        families = families or ["IPv4"]
        if len(families) < 2 and spec["ipFamilyPolicy"] != "SingleStack":
            families.append("IPv6" if families[0] == "IPv4" else "IPv4")
        spec["ipFamilies"] = families
        return
    causes: list[Cause] = []
    if spec["ipFamilyPolicy"] == "RequireDualStack":
        causes.append(
            invalid(
                "spec.ipFamilyPolicy",
                "RequireDualStack",
                "this cluster is not configured for dual-stack services",
            )
        )
    for i, family in enumerate(families):
        if family != "IPv4":
            causes.append(
                invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster")
            )
    if causes:
        raise StatusError.invalid("", "Service", name, [dict(c) for c in causes])
    spec["ipFamilies"] = families or ["IPv4"]


def _allocate_cluster_ip(spec: Obj, name: str, used: set[str], ctx: Context) -> None:
    ips = spec.get("clusterIPs") or []
    if ips and ips[0] == "None":
        spec["clusterIP"] = "None"
        return
    if not ips:
        ip = ctx.service_addresses.cluster_ip(used)
        if ip is None:
            raise StatusError(500, "InternalError", "Internal error occurred: range is full")
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
        return
    requested = str(ips[0])
    try:
        in_range = ipaddress.ip_address(requested) in SERVICE_CIDR
    except ValueError:
        return  # validation says why
    why = ""
    if not in_range:
        why = (
            f"the provided IP ({requested}) is not in the valid range. The range of valid IPs "
            f"is {SERVICE_CIDR}"
        )
    elif requested in used:
        why = "provided IP is already allocated"
    if why:
        cause = invalid("spec.clusterIPs", ips, f"failed to allocate IP {requested}: {why}")
        raise StatusError.invalid("", "Service", name, [cause])


def _allocate_node_ports(
    spec: Obj, name: str, used: set[int], mine: set[int], ctx: Context
) -> None:
    """Check the node ports asked for and allocate the others (``initNodePorts``)."""
    for i, port in enumerate(spec.get("ports") or []):
        wanted = port.get("nodePort")
        if not wanted:
            continue
        why = ""
        if wanted not in NODE_PORT_RANGE:
            why = f"provided port is not in the valid range. The range of valid ports is {_RANGE}"
        elif wanted in used and wanted not in mine:
            why = "provided port is already allocated"
        if why:
            cause = invalid(f"spec.ports[{i}].nodePort", wanted, why)
            raise StatusError.invalid("", "Service", name, [cause])
        mine.add(wanted)
    taken = used | mine
    for port in spec.get("ports") or []:
        if not port.get("nodePort"):
            allocated = ctx.service_addresses.node_port(taken)
            if allocated is None:
                raise StatusError(500, "InternalError", "Internal error occurred: range is full")
            port["nodePort"] = allocated
            taken.add(allocated)
