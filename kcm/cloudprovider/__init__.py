"""kcm.cloudprovider: the cloud provider plugin interface (k8s.io/cloud-provider).

A provider implements :class:`CloudProvider` (and the parts it supports: :class:`LoadBalancer`,
:class:`InstancesV2` or :class:`Instances`, :class:`Zones`, :class:`Routes`, :class:`Clusters`)
and registers a factory by name, in code (:func:`register_cloud_provider`) or as a
``kcm.cloudproviders`` entry point of its own package; ``--cloud-provider=<name>
--cloud-config=<file>`` then selects it (:func:`init_cloud_provider`). The sentinel errors are
:class:`kcm.errors.CloudProviderError`'s subclasses. :class:`FakeCloud` records every call
and fails on demand, for tests; :class:`LocalCloud` (``local``) is the embedded cluster's.
See docs/cloud-provider.md.
"""

from ._fake import FakeBalancer as FakeBalancer
from ._fake import FakeCall as FakeCall
from ._fake import FakeCloud as FakeCloud
from ._fake import FakeInstance as FakeInstance
from ._interface import CloudProvider as CloudProvider
from ._interface import Clusters as Clusters
from ._interface import InstanceMetadata as InstanceMetadata
from ._interface import Instances as Instances
from ._interface import InstancesV2 as InstancesV2
from ._interface import LoadBalancer as LoadBalancer
from ._interface import PVLabeler as PVLabeler
from ._interface import Route as Route
from ._interface import Routes as Routes
from ._interface import Zone as Zone
from ._interface import Zones as Zones
from ._local import DEFAULT_LOAD_BALANCER_POOL as DEFAULT_LOAD_BALANCER_POOL
from ._local import LocalBalancer as LocalBalancer
from ._local import LocalCloud as LocalCloud
from ._local import new_local_cloud as new_local_cloud
from ._local import parse_address_pool as parse_address_pool
from ._names import LABEL_FAILURE_DOMAIN_BETA_REGION as LABEL_FAILURE_DOMAIN_BETA_REGION
from ._names import LABEL_FAILURE_DOMAIN_BETA_ZONE as LABEL_FAILURE_DOMAIN_BETA_ZONE
from ._names import LABEL_INSTANCE_TYPE as LABEL_INSTANCE_TYPE
from ._names import LABEL_INSTANCE_TYPE_BETA as LABEL_INSTANCE_TYPE_BETA
from ._names import LABEL_NODE_EXCLUDE_BALANCERS as LABEL_NODE_EXCLUDE_BALANCERS
from ._names import LABEL_TOPOLOGY_REGION as LABEL_TOPOLOGY_REGION
from ._names import LABEL_TOPOLOGY_ZONE as LABEL_TOPOLOGY_ZONE
from ._names import LOAD_BALANCER_CLEANUP_FINALIZER as LOAD_BALANCER_CLEANUP_FINALIZER
from ._names import PROVIDED_NODE_IP_ANNOTATION as PROVIDED_NODE_IP_ANNOTATION
from ._names import TAINT_NODE_SHUTDOWN as TAINT_NODE_SHUTDOWN
from ._names import TAINT_NODE_UNINITIALIZED as TAINT_NODE_UNINITIALIZED
from ._names import TO_BE_DELETED_TAINT as TO_BE_DELETED_TAINT
from ._names import default_load_balancer_name as default_load_balancer_name
from ._registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from ._registry import CloudProviderFactory as CloudProviderFactory
from ._registry import cloud_provider_names as cloud_provider_names
from ._registry import get_cloud_provider as get_cloud_provider
from ._registry import init_cloud_provider as init_cloud_provider
from ._registry import register_cloud_provider as register_cloud_provider

__all__ = [
    "DEFAULT_LOAD_BALANCER_POOL",
    "ENTRY_POINT_GROUP",
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
    "CloudProvider",
    "CloudProviderFactory",
    "Clusters",
    "FakeBalancer",
    "FakeCall",
    "FakeCloud",
    "FakeInstance",
    "InstanceMetadata",
    "Instances",
    "InstancesV2",
    "LoadBalancer",
    "LocalBalancer",
    "LocalCloud",
    "PVLabeler",
    "Route",
    "Routes",
    "Zone",
    "Zones",
    "cloud_provider_names",
    "default_load_balancer_name",
    "get_cloud_provider",
    "init_cloud_provider",
    "new_local_cloud",
    "parse_address_pool",
    "register_cloud_provider",
]
