"""The canonical layout of Endpoints subsets (Go's ``endpoints.RepackSubsets``).

The controller builds one subset per (pod, port); the API wants addresses that share the same
ports grouped into one subset. Repacking maps every port to the addresses offering it (an
address not ready on one port is not ready on all), groups ports with identical address sets,
and sorts: addresses by IP then target UID, ports and subsets by the MD5 of Go's
``spew`` ``%#v`` printing of the value (``hashutil.DeepHashObject``). :func:`go_spew` prints
these three types exactly as Go does, so kcm's order is kube-controller-manager's and a
controller of either kind rewriting the other's Endpoints sees no change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from kcm.models.core_v1 import EndpointAddress, EndpointPort, EndpointSubset, ObjectReference

__all__ = ["Entry", "go_spew", "repack_subsets", "sort_key_for_address"]

_NO_PORT = ("", -1, "", None)
"""A sentinel port for port-less addresses (headless Services without ports)."""

_PortKey = tuple[str, int, str, str | None]
_AddressKey = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class Entry:
    """One address offering one port (or none), ready or not: the unit subsets are built of."""

    address: EndpointAddress
    port: EndpointPort | None
    ready: bool


def _port_key(port: EndpointPort | None) -> _PortKey:
    if port is None:
        return _NO_PORT
    return (port.name or "", port.port or 0, port.protocol or "", port.app_protocol)


def _address_key(address: EndpointAddress) -> _AddressKey:
    return address.ip or "", address.target_ref.uid if address.target_ref else None


def sort_key_for_address(address: EndpointAddress) -> tuple[bytes, int, str]:
    """Go's ``LessEndpointAddress``: IP bytes, then no target before a target, then target
    UID."""
    ref = address.target_ref
    return ((address.ip or "").encode(), 0 if ref is None else 1, (ref.uid or "") if ref else "")


def repack_subsets(entries: Iterable[Entry]) -> list[EndpointSubset]:
    """Group ``entries`` into the canonical subsets, sorted as Go sorts them."""
    addresses: dict[_AddressKey, EndpointAddress] = {}
    by_port: dict[_PortKey, dict[_AddressKey, bool]] = {}
    ports: dict[_PortKey, EndpointPort] = {}
    for entry in entries:
        akey = _address_key(entry.address)
        addresses.setdefault(akey, entry.address)
        pkey = _port_key(entry.port)
        if entry.port is not None:
            ports[pkey] = entry.port
        ready_by_address = by_port.setdefault(pkey, {})
        # not ready on one port trumps ready on another
        ready_by_address[akey] = ready_by_address.get(akey, True) and entry.ready
    groups: dict[frozenset[tuple[_AddressKey, bool]], list[_PortKey]] = {}
    for pkey, ready_by_address in by_port.items():
        groups.setdefault(frozenset(ready_by_address.items()), []).append(pkey)
    subsets = []
    for members, pkeys in groups.items():
        ready = sorted((addresses[a] for a, r in members if r), key=sort_key_for_address) or None
        not_ready = (
            sorted((addresses[a] for a, r in members if not r), key=sort_key_for_address) or None
        )
        real_ports = [ports[p] for p in pkeys if p != _NO_PORT]
        subsets.append(
            EndpointSubset(
                addresses=ready,
                not_ready_addresses=not_ready,
                ports=sorted(real_ports, key=_go_hash) or None,
            )
        )
    return sorted(subsets, key=_go_hash)


def _go_hash(value: EndpointPort | EndpointSubset) -> bytes:
    return hashlib.md5(go_spew(value).encode(), usedforsecurity=False).digest()


# -- Go's spew %#v, for the three types that are hashed ------------------------------------


def _string_ptr(value: str | None) -> str:
    return "(*string)<nil>" if value is None else f"(*string){value}"


def _port_fields(port: EndpointPort) -> str:
    return (
        f"Name:(string){port.name or ''} Port:(int32){port.port or 0} "
        f"Protocol:(v1.Protocol){port.protocol or ''} "
        f"AppProtocol:{_string_ptr(port.app_protocol)}"
    )


def _reference(ref: ObjectReference | None) -> str:
    if ref is None:
        return "(*v1.ObjectReference)<nil>"
    return (
        f"(*v1.ObjectReference){{Kind:(string){ref.kind or ''} "
        f"Namespace:(string){ref.namespace or ''} Name:(string){ref.name or ''} "
        f"UID:(types.UID){ref.uid or ''} APIVersion:(string){ref.api_version or ''} "
        f"ResourceVersion:(string){ref.resource_version or ''} "
        f"FieldPath:(string){ref.field_path or ''}}}"
    )


def _address(address: EndpointAddress) -> str:
    return (
        f"{{IP:(string){address.ip or ''} Hostname:(string){address.hostname or ''} "
        f"NodeName:{_string_ptr(address.node_name)} TargetRef:{_reference(address.target_ref)}}}"
    )


def _list(type_name: str, items: list[str] | None) -> str:
    if items is None:
        return f"([]{type_name})<nil>"
    return f"([]{type_name})[{' '.join(items)}]"


def go_spew(value: EndpointPort | EndpointSubset) -> str:
    """What Go's ``spew`` (``DisableMethods``, ``SortKeys``) prints for ``%#v`` of a
    ``v1.EndpointPort`` or ``v1.EndpointSubset`` value (None lists are Go's nil slices)."""
    if isinstance(value, EndpointPort):
        return f"(v1.EndpointPort){{{_port_fields(value)}}}"

    def addresses(items: Iterable[EndpointAddress] | None) -> list[str] | None:
        return None if items is None else [_address(a) for a in items]

    ports = None if value.ports is None else [f"{{{_port_fields(p)}}}" for p in value.ports]
    return (
        f"(v1.EndpointSubset){{Addresses:{_list('v1.EndpointAddress', addresses(value.addresses))} "
        f"NotReadyAddresses:{_list('v1.EndpointAddress', addresses(value.not_ready_addresses))} "
        f"Ports:{_list('v1.EndpointPort', ports)}}}"
    )
