"""The ServiceAccount token controller: legacy token Secrets, signed with
``--service-account-private-key-file``.

kube-controller-manager's ``serviceaccount-token`` controller; without a private key it is
disabled, as there. See docs/controllers.md#serviceaccount-token.
"""

from __future__ import annotations

from pathlib import Path

from kcm.controllerkit import root_ca
from kcm.controllers import CONTROLLERS, ControllerDisabled
from kcm.runtime import Manager

from ._controller import MAX_RETRIES as MAX_RETRIES
from ._controller import SECRET_TYPE as SECRET_TYPE
from ._controller import SERVICE_ACCOUNT_NAME_KEY as SERVICE_ACCOUNT_NAME_KEY
from ._controller import SERVICE_ACCOUNT_UID_KEY as SERVICE_ACCOUNT_UID_KEY
from ._controller import SecretKey as SecretKey
from ._controller import ServiceAccountKey as ServiceAccountKey
from ._controller import TokensController as TokensController
from ._controller import is_service_account_token as is_service_account_token
from ._jwt import LEGACY_ISSUER as LEGACY_ISSUER
from ._jwt import TokenGenerator as TokenGenerator
from ._jwt import legacy_claims as legacy_claims

NAME = "serviceaccount-token"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""``--concurrent-serviceaccount-token-syncs``."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    service_account_private_key_file: str | Path | None = None,
    root_ca_file: str | Path | None = None,
    auto_generate: bool = False,
) -> None:
    """Build the token controller from the manager's client, factory, clock and registry and
    add it (leader-elected). ``ca.crt`` is ``root_ca_file`` (``--root-ca-file``), else the CA
    the manager's client trusts, else left out.

    Raises:
        ControllerDisabled: no ``service_account_private_key_file``.
        ConfigError: the key or the CA file cannot be read or used.
    """
    if not service_account_private_key_file:
        raise ControllerDisabled(f'"{NAME}" is disabled because there is no private key')
    manager.add(
        TokensController(
            manager.client,
            manager.factory,
            token_generator=TokenGenerator.from_file(service_account_private_key_file),
            root_ca=root_ca(root_ca_file, manager.client.config),
            recorder=manager.event_recorder("tokens-controller"),
            clock=manager.clock,
            workers=workers,
            registry=manager.registry,
            auto_generate=auto_generate,
        )
    )


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "LEGACY_ISSUER",
    "MAX_RETRIES",
    "NAME",
    "SECRET_TYPE",
    "SERVICE_ACCOUNT_NAME_KEY",
    "SERVICE_ACCOUNT_UID_KEY",
    "SecretKey",
    "ServiceAccountKey",
    "TokenGenerator",
    "TokensController",
    "add_to_manager",
    "is_service_account_token",
    "legacy_claims",
]
