"""Well-known names the cloud controllers read and write (labels, taints, finalizer)."""

from __future__ import annotations

from kcm.models.core_v1 import Service

__all__ = [
    "LABEL_FAILURE_DOMAIN_BETA_REGION",
    "LABEL_FAILURE_DOMAIN_BETA_ZONE",
    "LABEL_INSTANCE_TYPE",
    "LABEL_INSTANCE_TYPE_BETA",
    "LABEL_NODE_EXCLUDE_BALANCERS",
    "LABEL_TOPOLOGY_REGION",
    "LABEL_TOPOLOGY_ZONE",
    "LOAD_BALANCER_CLEANUP_FINALIZER",
    "PROVIDED_NODE_IP_ANNOTATION",
    "TAINT_NODE_SHUTDOWN",
    "TAINT_NODE_UNINITIALIZED",
    "TO_BE_DELETED_TAINT",
    "default_load_balancer_name",
]

TAINT_NODE_UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized"
"""kubelet ``--cloud-provider=external`` registers its node with it; cloud-node removes it."""
TAINT_NODE_SHUTDOWN = "node.cloudprovider.kubernetes.io/shutdown"
"""cloud-node-lifecycle puts it (NoSchedule) on a node whose instance is shut down."""
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
"""The cluster autoscaler's taint: such nodes get no load-balancer traffic."""
LABEL_NODE_EXCLUDE_BALANCERS = "node.kubernetes.io/exclude-from-external-load-balancers"
"""A node carrying it (any value) gets no load-balancer traffic."""
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
"""The instance type cloud-node labels a node with (from the cloud's instances)."""
LABEL_INSTANCE_TYPE_BETA = "beta.kubernetes.io/instance-type"
"""The deprecated beta form of :data:`LABEL_INSTANCE_TYPE`, still written beside it."""
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
"""The zone cloud-node labels a node with (from the cloud's zones)."""
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
"""The deprecated beta form of :data:`LABEL_TOPOLOGY_ZONE`, still written beside it."""
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
"""The region cloud-node labels a node with (from the cloud's zones)."""
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
"""The deprecated beta form of :data:`LABEL_TOPOLOGY_REGION`, still written beside it."""
PROVIDED_NODE_IP_ANNOTATION = "alpha.kubernetes.io/provided-node-ip"
"""kubelet's ``--node-ip`` under an external cloud: it must be one of the cloud's addresses."""
LOAD_BALANCER_CLEANUP_FINALIZER = "service.kubernetes.io/load-balancer-cleanup"
"""Keeps a LoadBalancer Service until its balancer is deleted."""


def default_load_balancer_name(service: Service) -> str:
    """``"a"`` + the Service's UID without dashes, cut to 32 characters (the real helper,
    which some clouds' name limits require)."""
    name = "a" + (service.metadata.uid or "").replace("-", "")
    return name[:32]
