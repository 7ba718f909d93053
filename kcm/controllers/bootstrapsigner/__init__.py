"""The bootstrap signer: signs the ``kube-public/cluster-info`` ConfigMap with every bootstrap
token marked for signing (detached JWS), so joining nodes can trust it.

kube-controller-manager's ``bootstrapsigner``, off by default as there (turn it on with
``--controllers=*,bootstrapsigner``). See docs/controllers.md#bootstrapsigner.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import CLUSTER_INFO as CLUSTER_INFO
from ._controller import CLUSTER_INFO_NAMESPACE as CLUSTER_INFO_NAMESPACE
from ._controller import BootstrapSigner as BootstrapSigner
from ._jws import detached_signature as detached_signature
from ._jws import detached_signature_is_valid as detached_signature_is_valid
from ._signatures import KUBECONFIG_KEY as KUBECONFIG_KEY
from ._signatures import SIGNATURE_PREFIX as SIGNATURE_PREFIX
from ._signatures import signed_data as signed_data
from ._signatures import signing_tokens as signing_tokens

NAME = "bootstrapsigner"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One ConfigMap, one worker."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the signer from the manager's client, factory and clock and add it
    (leader-elected)."""
    add_controller(manager, NAME, BootstrapSigner, workers=workers)


__all__ = [
    "CLUSTER_INFO",
    "CLUSTER_INFO_NAMESPACE",
    "DEFAULT_WORKERS",
    "HELP",
    "KUBECONFIG_KEY",
    "NAME",
    "SIGNATURE_PREFIX",
    "BootstrapSigner",
    "add_to_manager",
    "detached_signature",
    "detached_signature_is_valid",
    "signed_data",
    "signing_tokens",
]
