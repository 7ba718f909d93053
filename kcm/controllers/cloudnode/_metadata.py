"""What cloud-node asks the cloud about a node and how the answer changes the Node.

InstancesV2 is preferred (one ``instance_metadata`` call with the Node); without it the
older Instances (addresses and type by providerID, else by name) plus Zones are asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

from kcm.cloudprovider import (
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_INSTANCE_TYPE,
    LABEL_INSTANCE_TYPE_BETA,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    PROVIDED_NODE_IP_ANNOTATION,
    TAINT_NODE_UNINITIALIZED,
    CloudProvider,
    InstanceMetadata,
)
from kcm.errors import CloudNotImplemented
from kcm.models.core_v1 import Node, NodeAddress, Taint

__all__ = [
    "addresses_changed",
    "cloud_labels",
    "cloud_taint",
    "instance_addresses",
    "instance_metadata",
    "label_repairs",
    "provided_ip_found",
    "provider_id",
    "with_hostname",
    "without_cloud_taint",
]

_T = TypeVar("_T")

_BETA_TO_GA = (
    (LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_TOPOLOGY_ZONE),
    (LABEL_FAILURE_DOMAIN_BETA_REGION, LABEL_TOPOLOGY_REGION),
    (LABEL_INSTANCE_TYPE_BETA, LABEL_INSTANCE_TYPE),
)


def _taints(node: Node) -> Sequence[Taint]:
    return (node.spec.taints if node.spec else None) or ()


def cloud_taint(node: Node) -> Taint | None:
    """The ``node.cloudprovider.kubernetes.io/uninitialized`` taint, if the node has it."""
    return next((t for t in _taints(node) if t.key == TAINT_NODE_UNINITIALIZED), None)


def without_cloud_taint(node: Node) -> list[Taint]:
    return [t for t in _taints(node) if t.key != TAINT_NODE_UNINITIALIZED]


async def provider_id(cloud: CloudProvider, node: Node) -> str:
    """spec.providerID; else none when InstancesV2 answers by Node; else
    ``<provider>://<instance id>`` (``""`` if the cloud does not implement instance IDs).

    Raises:
        whatever the cloud raises (InstanceNotFound...): the node is retried.
    """
    existing = (node.spec.provider_id if node.spec else None) or ""
    if existing or cloud.instances_v2() is not None:
        return existing
    instances = cloud.instances()
    if instances is None:
        raise RuntimeError("failed to get instances from cloud provider")
    try:
        instance = await instances.instance_id(node.metadata.name or "")
    except CloudNotImplemented:
        return ""
    return f"{cloud.provider_name}://{instance}"


async def _by_provider_id_else_name(
    by_id: Callable[[], Awaitable[_T]], by_name: Callable[[], Awaitable[_T]], failed: str
) -> _T:
    """Ask Instances by providerID, else by node name; when both fail, a RuntimeError of
    ``failed`` with both errors (``{by_id}``, ``{by_name}``)."""
    try:
        return await by_id()
    except Exception as id_error:
        try:
            return await by_name()
        except Exception as name_error:
            raise RuntimeError(failed.format(by_id=id_error, by_name=name_error)) from name_error


async def instance_metadata(cloud: CloudProvider, pid: str, node: Node) -> InstanceMetadata:
    """The instance's metadata: InstancesV2's, else Instances' plus Zones'."""
    v2 = cloud.instances_v2()
    if v2 is not None:
        return await v2.instance_metadata(node)
    instances = cloud.instances()
    if instances is None:
        raise RuntimeError("failed to get instances from cloud provider")
    name = node.metadata.name or ""
    addresses = await _by_provider_id_else_name(
        lambda: instances.node_addresses_by_provider_id(pid),
        lambda: instances.node_addresses(name),
        "error fetching node by provider ID: {by_id}, and error by node name: {by_name}",
    )
    instance_type = await _by_provider_id_else_name(
        lambda: instances.instance_type_by_provider_id(pid),
        lambda: instances.instance_type(name),
        "InstanceType: Error fetching by providerID: {by_id} Error fetching by NodeName: {by_name}",
    )
    zone = region = ""
    zones = cloud.zones()
    if zones is not None:
        try:
            found = (
                await zones.get_zone_by_provider_id(pid)
                if pid
                else await zones.get_zone_by_node_name(name)
            )
        except Exception as exc:
            raise RuntimeError(f"failed to get zone from cloud provider: {exc}") from exc
        zone, region = found.failure_domain, found.region
    return InstanceMetadata(
        instance_type=instance_type,
        node_addresses=tuple(addresses),
        zone=zone,
        region=region,
    )


async def instance_addresses(cloud: CloudProvider, node: Node) -> Sequence[NodeAddress]:
    """The addresses the periodic refresh writes (InstancesV2's metadata, else Instances')."""
    v2 = cloud.instances_v2()
    if v2 is not None:
        return (await v2.instance_metadata(node)).node_addresses
    instances = cloud.instances()
    if instances is None:
        raise RuntimeError("failed to get instances from cloud provider")
    pid = (node.spec.provider_id if node.spec else None) or ""
    try:
        return await instances.node_addresses_by_provider_id(pid)
    except Exception:
        return await instances.node_addresses(node.metadata.name or "")


def cloud_labels(meta: InstanceMetadata) -> dict[str, str]:
    """The instance-type, zone and region labels, GA and beta, for what the cloud told."""
    labels: dict[str, str] = {}
    if meta.instance_type:
        labels[LABEL_INSTANCE_TYPE] = labels[LABEL_INSTANCE_TYPE_BETA] = meta.instance_type
    if meta.zone:
        labels[LABEL_TOPOLOGY_ZONE] = labels[LABEL_FAILURE_DOMAIN_BETA_ZONE] = meta.zone
    if meta.region:
        labels[LABEL_TOPOLOGY_REGION] = labels[LABEL_FAILURE_DOMAIN_BETA_REGION] = meta.region
    return labels


def label_repairs(labels: Mapping[str, str]) -> dict[str, str]:
    """GA labels that are missing or differ from their beta label (the beta one wins)."""
    repairs: dict[str, str] = {}
    for beta, ga in _BETA_TO_GA:
        if beta in labels and labels.get(ga) != labels[beta]:
            repairs[ga] = labels[beta]
    return repairs


def provided_ip_found(node: Node, addresses: Sequence[NodeAddress]) -> bool | None:
    """None without the ``alpha.kubernetes.io/provided-node-ip`` annotation; else whether
    the cloud's addresses include it."""
    provided = (node.metadata.annotations or {}).get(PROVIDED_NODE_IP_ANNOTATION)
    if provided is None:
        return None
    return any(a.address == provided for a in addresses)


def with_hostname(node: Node, addresses: Sequence[NodeAddress]) -> list[NodeAddress]:
    """The cloud's addresses, plus the node's own Hostname address if the cloud gave none."""
    result = list(addresses)
    if not any(a.type == "Hostname" for a in result):
        current = (node.status.addresses if node.status else None) or ()
        result += [a for a in current if a.type == "Hostname"]
    return result


def addresses_changed(old: Sequence[NodeAddress], new: Sequence[NodeAddress]) -> bool:
    """The real check: a different count, or an address per type that differs."""
    if len(old) != len(new):
        return True
    by_type = {a.type: a.address for a in old}
    return any(by_type.get(a.type) != a.address for a in new)
