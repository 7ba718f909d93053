"""EndpointSlice pieces the slice-writing controllers share: labels, endpoint identity, port
groups.

The EndpointSlice and EndpointSlice-mirroring controllers both keep a desired set of
endpoints per group of ports and reconcile existing slices against it (Go's
``pkg/controller/util/endpointslice`` and the slice half of ``util/endpoint``). An endpoint is
identified by its addresses and hostname only, so a change of readiness, node or target is an
update in place, not a remove and an add.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from kcm.models import ObjectKey
from kcm.models.discovery_v1 import Endpoint, EndpointPort, EndpointSlice

__all__ = [
    "MANAGED_BY_LABEL",
    "SERVICE_NAME_LABEL",
    "SKIP_MIRROR_LABEL",
    "EndpointSet",
    "endpoint_key",
    "endpoint_slice_prefix",
    "endpoints_equal_beyond_key",
    "managed_by",
    "port_map_key",
    "service_key_for_slice",
]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
"""The Service (same namespace) an EndpointSlice belongs to."""
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
"""Which controller writes an EndpointSlice (``endpointslice-controller.k8s.io``,
``endpointslicemirroring-controller.k8s.io``)."""
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
"""On an Endpoints object (value ``"true"``): do not mirror it into EndpointSlices."""

EndpointKey = tuple[tuple[str, ...], str]
PortMapKey = tuple[tuple[str, int, str, str], ...]


def endpoint_key(endpoint: Endpoint) -> EndpointKey:
    """An endpoint's identity: its sorted addresses and its hostname (``hashEndpoint``)."""
    return tuple(sorted(endpoint.addresses or ())), endpoint.hostname or ""


def endpoints_equal_beyond_key(a: Endpoint, b: Endpoint) -> bool:
    """Two endpoints of the same identity also agree on what :func:`endpoint_key` leaves out:
    conditions, node, zone and target (``EndpointsEqualBeyondHash``; Go's 1.24 version
    compared the node and zone of one endpoint with themselves and only the ready
    condition, so a change of those alone was not written)."""
    return (
        a.conditions == b.conditions
        and (a.node_name or None) == (b.node_name or None)
        and (a.zone or None) == (b.zone or None)
        and a.target_ref == b.target_ref
    )


def port_map_key(ports: Sequence[EndpointPort] | None) -> PortMapKey:
    """A key for a group of ports that ignores their order (``NewPortMapKey``)."""
    return tuple(
        sorted(
            (p.name or "", p.port or 0, p.protocol or "", p.app_protocol or "") for p in ports or ()
        )
    )


class EndpointSet:
    """Endpoints by :func:`endpoint_key` (an insert with a known key replaces it), in insertion
    order: :meth:`pop` takes the oldest, where Go's ``PopAny`` takes a random one."""

    def __init__(self, endpoints: Iterable[Endpoint] = ()) -> None:
        self._items: dict[EndpointKey, Endpoint] = {}
        for endpoint in endpoints:
            self.add(endpoint)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Endpoint]:
        return iter(list(self._items.values()))

    def __contains__(self, endpoint: object) -> bool:
        return isinstance(endpoint, Endpoint) and endpoint_key(endpoint) in self._items

    def __repr__(self) -> str:
        return f"<EndpointSet {len(self)} endpoints>"

    def add(self, endpoint: Endpoint) -> None:
        """Insert ``endpoint`` (replacing one with the same identity)."""
        self._items[endpoint_key(endpoint)] = endpoint

    def get(self, endpoint: Endpoint) -> Endpoint | None:
        """The member with ``endpoint``'s identity, if any."""
        return self._items.get(endpoint_key(endpoint))

    def discard(self, endpoint: Endpoint) -> None:
        """Remove the member with ``endpoint``'s identity, if any."""
        self._items.pop(endpoint_key(endpoint), None)

    def pop(self) -> Endpoint:
        """Remove and return the oldest member.

        Raises:
            KeyError: the set is empty.
        """
        key = next(iter(self._items))
        return self._items.pop(key)


def managed_by(endpoint_slice: EndpointSlice) -> str | None:
    """The slice's :data:`MANAGED_BY_LABEL` value."""
    return (endpoint_slice.metadata.labels or {}).get(MANAGED_BY_LABEL)


def service_key_for_slice(endpoint_slice: EndpointSlice) -> ObjectKey | None:
    """The key of the Service (or Endpoints) a slice belongs to, from its
    :data:`SERVICE_NAME_LABEL`; None without the label."""
    name = (endpoint_slice.metadata.labels or {}).get(SERVICE_NAME_LABEL)
    if not name:
        return None
    return ObjectKey(endpoint_slice.metadata.namespace or "", name)


def endpoint_slice_prefix(name: str) -> str:
    """The ``generateName`` of a new slice for ``name``: ``<name>-`` while that stays a valid
    name prefix (253 characters), else ``name``."""
    return f"{name}-" if len(name) < 253 else name
