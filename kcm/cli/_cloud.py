"""The cloud settings of ``kcm`` and ``kcm cloud-controller-manager``: ``--cloud-provider``,
``--cloud-config``, ``--cluster-name``, and which provider they select.

kube-controller-manager's rule: with ``--cloud-provider=external`` (or none) the cloud loops
(service, route, cloud-node-lifecycle) do not run there; a cloud controller manager runs
them. kcm's embedded cluster (no kubeconfig) defaults to the ``local`` cloud, so its
LoadBalancer Services get addresses.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

__all__ = ["EMBEDDED_CLOUD_PROVIDER", "add_cloud_flags", "cloud_provider_name", "load_cloud"]

logger = logging.getLogger("kcm.cli")

EMBEDDED_CLOUD_PROVIDER = "local"
"""The provider embedded mode uses without ``--cloud-provider``."""


def add_cloud_flags(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """``--cloud-provider``, ``--cloud-config``, ``--cluster-name``."""
    cloud = parser.add_argument_group("cloud provider")
    cloud.add_argument(
        "--cloud-provider",
        default=None,
        metavar="NAME",
        help="the cloud provider (registered in code or installed with a 'kcm.cloudproviders' "
        "entry point; 'local' ships with kcm); 'external' runs no cloud loops here"
        + ("" if required else " (default: local in embedded mode, external against a cluster)"),
    )
    cloud.add_argument(
        "--cloud-config", default=None, metavar="FILE", help="the provider's configuration file"
    )
    cloud.add_argument(
        "--cluster-name",
        default="kubernetes",
        metavar="NAME",
        help="the cluster's name, passed to every cloud call (default kubernetes)",
    )


def cloud_provider_name(flag: str | None, *, embedded: bool) -> str:
    """The provider ``--cloud-provider`` selects: the flag, else ``local`` in embedded mode
    and ``external`` (none) against a cluster."""
    if flag is not None:
        return flag
    return EMBEDDED_CLOUD_PROVIDER if embedded else "external"


def load_cloud(name: str, config_file: str | None) -> Any:
    """The provider, or None for ``external``/``""`` (logged: the cloud loops are skipped).

    Raises:
        ConfigError: unknown provider, unreadable config, or the provider refused it.
    """
    from kcm.cloudprovider import init_cloud_provider

    provider = init_cloud_provider(name, config_file)
    if provider is None:
        logger.info(
            "--cloud-provider=%s: the cloud loops (service, route, cloud-node-lifecycle) are "
            "not run here; a cloud-controller-manager runs them",
            name or "external",
        )
    return provider
