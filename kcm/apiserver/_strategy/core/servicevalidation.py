"""``ValidateService`` and ``ValidateServiceUpdate``: a Service's fields with kube-apiserver's
messages (types, ports and target ports, session affinity, cluster IPs and IP families,
traffic policies), and what an update may not change (the cluster IPs once set)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Final

from ..._field_errors import Cause, duplicate, forbidden, go_value, invalid, not_supported, required
from ..._names import dns1123_label, dns1123_subdomain
from ..._object_meta import validate_labels

__all__ = ["validate_service_spec", "validate_service_update"]

_TYPES: Final = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_PROTOCOLS: Final = ["SCTP", "TCP", "UDP"]
_AFFINITIES: Final = ["ClientIP", "None"]
_FAMILIES: Final = ["IPv4", "IPv6"]
_POLICIES: Final = ["PreferDualStack", "RequireDualStack", "SingleStack"]
_TRAFFIC: Final = ["Cluster", "Local"]
_KUBELET_PORT: Final = 10250
_PORT_RANGE: Final = "must be between 1 and 65535, inclusive"
_BAD_IP: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_PORT_NAME_CHARS: Final = re.compile(r"^[-a-z0-9]+$")


def _ip(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(str(value))
    except ValueError:
        return None


def port_name_errors(name: str) -> list[str]:
    """``IsValidPortName`` (a named target port)."""
    errs = []
    if len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        errs.append("must contain at least one letter or number (a-z, 0-9)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _headless(spec: Mapping[str, Any]) -> bool:
    ips = spec.get("clusterIPs") or []
    return bool(ips) and ips[0] == "None"


def _validate_port(
    port: Mapping[str, Any], path: str, require_name: bool, names: set[str]
) -> list[Cause]:
    causes: list[Cause] = []
    name = port.get("name") or ""
    if require_name and not name:
        causes.append(required(f"{path}.name"))
    elif name:
        causes += [invalid(f"{path}.name", name, msg) for msg in dns1123_label(name)]
        if name in names:
            causes.append(duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port")
    if not isinstance(number, int) or not 1 <= number <= 65535:
        causes.append(invalid(f"{path}.port", number or 0, _PORT_RANGE))
    protocol = port.get("protocol") or ""
    if not protocol:
        causes.append(required(f"{path}.protocol"))
    elif protocol not in _PROTOCOLS:
        causes.append(not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, str):
        causes += [invalid(f"{path}.targetPort", target, msg) for msg in port_name_errors(target)]
    elif not isinstance(target, int) or not 1 <= target <= 65535:
        causes.append(invalid(f"{path}.targetPort", target or 0, _PORT_RANGE))
    return causes


def _validate_cluster_ips(spec: Mapping[str, Any]) -> list[Cause]:
    """``ValidateServiceClusterIPsRelatedFields``."""
    if spec.get("type") == "ExternalName":
        return []
    causes: list[Cause] = []
    cluster_ip = spec.get("clusterIP") or ""
    ips = [str(ip) for ip in spec.get("clusterIPs") or []]
    if cluster_ip:
        if not ips:
            causes.append(required("spec.clusterIPs"))
        elif ips[0] != cluster_ip:
            causes.append(invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    elif ips:
        causes.append(
            invalid("spec.clusterIPs", ips, "must be empty when `clusterIP` is not specified")
        )
    seen: set[str] = set()
    for i, family in enumerate(spec.get("ipFamilies") or []):
        if family not in _FAMILIES:
            causes.append(not_supported(f"spec.ipFamilies[{i}]", family, _FAMILIES))
        if family in seen:
            causes.append(duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in _POLICIES:
        causes.append(not_supported("spec.ipFamilyPolicy", policy, _POLICIES))
    bad = False
    for i, ip in enumerate(ips):
        if i == 0 and ip == "None":
            if len(ips) > 1:
                bad = True
                causes.append(
                    invalid("spec.clusterIPs", ips, "'None' must be the first and only value")
                )
            continue
        if _ip(ip) is None:
            bad = True
            causes.append(invalid(f"spec.clusterIPs[{i}]", ip, _BAD_IP))
    if len(ips) > 2:
        causes.append(invalid("spec.clusterIPs", ips, "may only hold up to 2 values"))
    if bad:
        return causes
    if len(ips) > 1 and len({_version(ip) for ip in ips}) != 2:
        causes.append(
            invalid("spec.clusterIPs", ips, "may specify no more than one IP for each IP family")
        )
    families = spec.get("ipFamilies") or []
    if not _headless(spec):
        for i, (ip, family) in enumerate(zip(ips, families, strict=False)):
            if family == "IPv4" and _version(ip) == 6:
                causes.append(
                    invalid(
                        f"spec.clusterIPs[{i}]",
                        ip,
                        f"expected an IPv4 value as indicated by `ipFamilies[{i}]`",
                    )
                )
            if family == "IPv6" and _version(ip) == 4:
                causes.append(
                    invalid(
                        f"spec.clusterIPs[{i}]",
                        ip,
                        f"expected an IPv6 value as indicated by `ipFamilies[{i}]`",
                    )
                )
    return causes


def _version(ip: str) -> int:
    parsed = _ip(ip)
    return parsed.version if parsed is not None else 0


def _externally_accessible(spec: Mapping[str, Any]) -> bool:
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )


def _validate_traffic(spec: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    external = spec.get("externalTrafficPolicy") or ""
    if not _externally_accessible(spec):
        if external:
            causes.append(
                invalid(
                    "spec.externalTrafficPolicy",
                    external,
                    "may only be set when `type` is 'NodePort' or 'LoadBalancer'",
                )
            )
    elif not external:
        causes.append(required("spec.externalTrafficPolicy"))
    elif external not in _TRAFFIC:
        causes.append(not_supported("spec.externalTrafficPolicy", external, _TRAFFIC))
    needs_health = spec.get("type") == "LoadBalancer" and external == "Local"
    health = spec.get("healthCheckNodePort") or 0
    if not needs_health and health:
        causes.append(
            invalid(
                "spec.healthCheckNodePort",
                health,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is "
                "'Local'",
            )
        )
    elif needs_health and not health:
        causes.append(required("spec.healthCheckNodePort"))
    internal = spec.get("internalTrafficPolicy")
    if internal is None:
        causes.append(required("spec.internalTrafficPolicy"))
    elif internal not in _TRAFFIC:
        causes.append(not_supported("spec.internalTrafficPolicy", internal, _TRAFFIC))
    return causes


def validate_service_spec(obj: Mapping[str, Any]) -> list[Cause]:
    """The spec rules of ``ValidateService`` (ObjectMeta is the caller's)."""
    spec: Mapping[str, Any] = obj.get("spec") or {}
    kind = spec.get("type") or ""
    ports = [p for p in spec.get("ports") or [] if isinstance(p, Mapping)]
    causes: list[Cause] = []
    if not ports and not _headless(spec) and kind != "ExternalName":
        causes.append(required("spec.ports"))
    if kind == "LoadBalancer":
        for i, port in enumerate(ports):
            if port.get("port") == _KUBELET_PORT:
                causes.append(
                    invalid(
                        f"spec.ports[{i}]",
                        _KUBELET_PORT,
                        f"may not expose port {_KUBELET_PORT} externally since it is used by "
                        "kubelet",
                    )
                )
    if kind in ("LoadBalancer", "NodePort") and _headless(spec):
        causes.append(
            invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services")
        )
    if kind == "ExternalName":
        for field in ("clusterIPs", "ipFamilies"):
            if spec.get(field):
                causes.append(
                    forbidden(f"spec.{field}", "may not be set for ExternalName services")
                )
        if spec.get("ipFamilyPolicy") is not None:
            causes.append(
                forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services")
            )
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if cname:
            causes += [invalid("spec.externalName", cname, msg) for msg in dns1123_subdomain(cname)]
        else:
            causes.append(required("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        causes += _validate_port(port, f"spec.ports[{i}]", len(ports) > 1, names)
    if spec.get("selector") is not None:
        causes += validate_labels(spec["selector"], "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        causes.append(required("spec.sessionAffinity"))
    elif affinity not in _AFFINITIES:
        causes.append(not_supported("spec.sessionAffinity", affinity, _AFFINITIES))
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        causes.append(
            forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None")
        )
    causes += _validate_cluster_ips(spec)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        if _ip(ip) is None:
            causes.append(invalid(f"spec.externalIPs[{i}]", ip, _BAD_IP))
    if not kind:
        causes.append(required("spec.type"))
    elif kind not in _TYPES:
        causes.append(not_supported("spec.type", kind, _TYPES))
    if kind == "ClusterIP":
        for i, port in enumerate(ports):
            if port.get("nodePort"):
                causes.append(
                    forbidden(
                        f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'"
                    )
                )
    node_ports: set[tuple[Any, Any]] = set()
    pairs: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        if port.get("nodePort"):
            key = (port.get("protocol"), port["nodePort"])
            if key in node_ports:
                causes.append(duplicate(f"spec.ports[{i}].nodePort", port["nodePort"]))
            node_ports.add(key)
        pair = (port.get("protocol"), port.get("port"))
        if pair in pairs:
            shown = (
                f'core.ServicePort{{Name:"", Protocol:{go_value(pair[0] or "")}, '
                f"AppProtocol:(*string)(nil), Port:{pair[1]}, TargetPort:intstr.IntOrString"
                '{Type:0, IntVal:0, StrVal:""}, NodePort:0}'
            )
            causes.append(
                {
                    "reason": "FieldValueDuplicate",
                    "message": f"Duplicate value: {shown}",
                    "field": f"spec.ports[{i}]",
                }
            )
        pairs.add(pair)
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != "LoadBalancer":
        causes.append(
            forbidden(
                "spec.allocateLoadBalancerNodePorts",
                "may only be used when `type` is 'LoadBalancer'",
            )
        )
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        causes.append(required("allocateLoadBalancerNodePorts"))
    return causes + _validate_traffic(spec)


def validate_service_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``validateUpgradeDowngradeClusterIPs``: the primary cluster IP never changes, a
    secondary one is released only with ``ipFamilyPolicy: SingleStack``."""
    spec: Mapping[str, Any] = new.get("spec") or {}
    before: Mapping[str, Any] = old.get("spec") or {}
    if "ExternalName" in (spec.get("type"), before.get("type")):
        return []
    if _headless(spec) and _headless(before):
        return []
    ips = list(spec.get("clusterIPs") or [])
    old_ips = list(before.get("clusterIPs") or [])
    causes: list[Cause] = []
    if len(ips) == len(old_ips):
        causes += [
            invalid(f"spec.clusterIPs[{i}]", ips, "may not change once set")
            for i, ip in enumerate(old_ips)
            if ip != ips[i]
        ]
    elif len(old_ips) > len(ips):
        if not ips:
            causes.append(invalid("spec.clusterIPs[0]", ips, "primary clusterIP can not be unset"))
        elif old_ips and ips[0] != old_ips[0]:
            causes.append(invalid("spec.clusterIPs[0]", ips, "may not change once set"))
        if len(ips) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            causes.append(
                invalid(
                    "spec.clusterIPs[0]",
                    ips,
                    "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary "
                    "clusterIP",
                )
            )
    elif old_ips and ips[0] != old_ips[0]:
        causes.append(invalid("spec.clusterIPs[0]", ips, "may not change once set"))
    return causes
