"""``--enable-admission-plugins`` / ``--disable-admission-plugins``, shared by ``kcm apiserver``
and the embedded server of ``kcm run`` (kube-apiserver's flags: comma-separated plugin names,
repeatable)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_admission_flags", "admission_plugins_from"]


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def add_admission_flags(parser: Any, *, prefix: str = "") -> None:
    """Add both flags to ``parser`` (an ArgumentParser or a group)."""
    parser.add_argument(
        f"--{prefix}enable-admission-plugins",
        dest="enable_admission_plugins",
        type=_names,
        action="extend",
        default=[],
        metavar="NAMES",
        help="admission plugins to run besides the defaults (kube-apiserver's names, "
        "comma-separated); they always run in kube-apiserver's order",
    )
    parser.add_argument(
        f"--{prefix}disable-admission-plugins",
        dest="disable_admission_plugins",
        type=_names,
        action="extend",
        default=[],
        metavar="NAMES",
        help="default admission plugins not to run (NamespaceLifecycle, LimitRanger, "
        "ServiceAccount, Priority, DefaultTolerationSeconds, StorageObjectInUseProtection, "
        "ResourceQuota)",
    )


def admission_plugins_from(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The plugins the flags choose; None (the server's defaults) without either flag.

    Raises:
        ValueError: an unknown name, one kcm does not implement, or a name in both (the
            message lists the known plugins).
    """
    enable, disable = args.enable_admission_plugins, args.disable_admission_plugins
    if not enable and not disable:
        return None
    from kcm.apiserver import enabled_admission_plugins

    return enabled_admission_plugins(enable, disable)
