"""The root CA publisher: a ``kube-root-ca.crt`` ConfigMap in every namespace.

kube-controller-manager's ``root-ca-cert-publisher``. See
docs/controllers.md#root-ca-cert-publisher.
"""

from __future__ import annotations

from pathlib import Path

from kcm.controllerkit import root_ca
from kcm.controllers import CONTROLLERS
from kcm.runtime import Manager

from ._controller import DESCRIPTION as DESCRIPTION
from ._controller import DESCRIPTION_ANNOTATION as DESCRIPTION_ANNOTATION
from ._controller import ROOT_CA_CONFIG_MAP as ROOT_CA_CONFIG_MAP
from ._controller import RootCACertPublisher as RootCACertPublisher

NAME = "root-ca-cert-publisher"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One worker, as kube-controller-manager."""


def add_to_manager(
    manager: Manager, *, workers: int = DEFAULT_WORKERS, root_ca_file: str | Path | None = None
) -> None:
    """Build the publisher from the manager's client, factory, clock and registry and add it
    (leader-elected). It publishes ``root_ca_file`` (``--root-ca-file``), else the CA the
    manager's client trusts, else an empty ``ca.crt`` (as kube-controller-manager).

    Raises:
        ConfigError: ``root_ca_file`` cannot be read or holds no PEM certificate.
    """
    manager.add(
        RootCACertPublisher(
            manager.client,
            manager.factory,
            root_ca=root_ca(root_ca_file, manager.client.config),
            recorder=manager.event_recorder(f"{NAME}-controller"),
            clock=manager.clock,
            workers=workers,
            registry=manager.registry,
        )
    )


__all__ = [
    "DEFAULT_WORKERS",
    "DESCRIPTION",
    "DESCRIPTION_ANNOTATION",
    "HELP",
    "NAME",
    "ROOT_CA_CONFIG_MAP",
    "RootCACertPublisher",
    "add_to_manager",
]
