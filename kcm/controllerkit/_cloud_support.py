"""Whether a cloud controller can run on a provider: each needs one part of it (instances,
routes or load balancers). The same answer serves ``add_to_manager``, which skips the
controller (``ControllerDisabled``: "Skipping controller ..."), and the constructor, which
refuses the provider (ValueError), so the two never disagree."""

from __future__ import annotations

from typing import Literal

from kcm.cloudprovider import CloudProvider

__all__ = ["CloudPart", "cloud_support_refusal"]

CloudPart = Literal["instances", "routes", "load balancers"]
"""A part of :class:`~kcm.cloudprovider.CloudProvider` a controller needs ("instances" is
Instances or InstancesV2)."""


def cloud_support_refusal(cloud: CloudProvider | None, needs: CloudPart) -> str | None:
    """Why a controller that ``needs`` a part of the provider cannot run on ``cloud`` (none
    given, or one without that part), or None when it can."""
    if cloud is None:
        return "no cloud provider (--cloud-provider)"
    name = cloud.provider_name
    if needs == "instances":
        if cloud.instances() is None and cloud.instances_v2() is None:
            return f"the cloud provider {name!r} has no instances"
    elif needs == "routes":
        if cloud.routes() is None:
            return f"the cloud provider {name!r} does not support routes"
    elif cloud.load_balancer() is None:
        return f"the cloud provider {name!r} does not support external load balancers"
    return None
