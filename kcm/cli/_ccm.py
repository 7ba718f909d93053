"""``kcm cloud-controller-manager``: the cloud controllers (cloud-node, cloud-node-lifecycle,
route, service) against a cluster, on the provider ``--cloud-provider`` names.

The same conventions as ``kcm``: kube's flag names and defaults (the cloud controller
manager's: leader election on ``kube-system/cloud-controller-manager``, health and metrics on
port 10258), a YAML ``--config`` file, the status view. It needs a cluster (``--kubeconfig``,
``--master``, ``$KUBECONFIG`` or in-cluster): it never starts the embedded API server.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from kcm.controllers import CONTROLLERS, ControllerSpec, enabled_controllers

from ._cloud import add_cloud_flags
from ._flags import (
    _add_connection_flags,
    _add_controllers_flag,
    _add_leader_election_flags,
    _add_output_flags,
    _add_registry_flags,
    _add_serving_flags,
    _controller_selection,
    _HelpFormatter,
    _shared_settings,
    _tuning_from,
    parse_settings,
)
from ._settings import RunSettings
from ._values import UsageErrorParser

__all__ = ["CCM_PORT", "CLOUD_CONTROLLERS", "build_ccm_parser", "parse_ccm_args", "run_ccm"]

PROG = "kcm cloud-controller-manager"

CCM_PORT = 10258
"""The cloud controller manager's secure port (kube-controller-manager's is 10257)."""

CLOUD_CONTROLLERS: Mapping[str, ControllerSpec] = MappingProxyType(
    {name: spec for name, spec in CONTROLLERS.items() if spec.cloud}
)
"""The controllers this command runs (the registry's cloud controllers)."""

_DESCRIPTION = """\
kcm cloud-controller-manager: the cloud controllers on a cloud provider plugin.

Runs cloud-node, cloud-node-lifecycle, route and service against the cluster of --kubeconfig,
--master, $KUBECONFIG or the in-cluster service account, on the provider --cloud-provider
names: one registered in code, one installed as a package declaring a 'kcm.cloudproviders'
entry point, or 'local' (kcm's own). Run kube-controller-manager (or kcm) with
--cloud-provider=external beside it. See docs/cloud-provider.md."""


def build_ccm_parser() -> argparse.ArgumentParser:
    """The parser of ``kcm cloud-controller-manager``."""
    width = max(len(name) for name in CLOUD_CONTROLLERS)
    parser = UsageErrorParser(
        prog=PROG,
        usage="%(prog)s --cloud-provider=NAME [flags]",
        description=_DESCRIPTION,
        epilog="controllers (--controllers; all on by default):\n"
        + "\n".join(f"  {n:<{width}}  {s.help}" for n, s in CLOUD_CONTROLLERS.items()),
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "--config", metavar="FILE", help="YAML file with any of these settings (flags win)"
    )
    _add_connection_flags(parser)
    add_cloud_flags(parser, required=True)
    ctl = parser.add_argument_group("controllers")
    _add_controllers_flag(
        parser,
        ctl,
        help="'*' (all on by default), 'name' (on), '-name' (off); the first entry naming a "
        "controller wins (default '*')",
    )
    _add_registry_flags(ctl, CLOUD_CONTROLLERS)
    _add_leader_election_flags(parser)
    _add_serving_flags(parser)
    _add_output_flags(parser)
    parser.set_defaults(leader_elect_resource_name="cloud-controller-manager", secure_port=CCM_PORT)
    for action in parser._actions:  # the defaults this command changes, in --help too
        if action.dest == "leader_elect_resource_name":
            action.help = "lock name (default cloud-controller-manager)"
        elif action.dest == "secure_port":
            action.help = f"HTTPS port; 0 turns serving off (default {CCM_PORT})"
    return parser


def _controllers(selection: Sequence[str]) -> list[str]:
    """The cloud controllers ``--controllers`` turns on.

    Raises:
        ValueError: a name that is not a cloud controller.
    """
    entries = [e.strip() for e in selection if e.strip()]
    unknown = [e for e in entries if e != "*" and e.removeprefix("-") not in CLOUD_CONTROLLERS]
    if unknown:
        raise ValueError(
            f"unknown controller{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(u) for u in unknown)} in --controllers; known: "
            f"{', '.join(CLOUD_CONTROLLERS)} (or '*', and '-name' to turn one off)"
        )
    return [n for n in enabled_controllers(entries) if n in CLOUD_CONTROLLERS]


def _settings(args: argparse.Namespace) -> RunSettings:
    selection = _controller_selection(args)
    workers, options = _tuning_from(args, CLOUD_CONTROLLERS)
    if not args.cloud_provider:
        raise ValueError("--cloud-provider is required (a provider name; see --help)")
    if args.cloud_provider == "external":
        raise ValueError("--cloud-provider=external is for kube-controller-manager, not here")
    return RunSettings(
        controllers=tuple(_controllers(selection)),
        **_shared_settings(args),
        workers=workers,
        controller_options=options,
        simulate=False,
    )


def parse_ccm_args(argv: Sequence[str]) -> RunSettings:
    """Parse ``kcm cloud-controller-manager`` arguments (and ``--config``).

    Exits with status 2 and a usage message on any bad flag, value, config file or
    controller name, or without ``--cloud-provider``.
    """
    return parse_settings(build_ccm_parser(), argv, _settings)


def run_ccm(argv: Sequence[str], *, environ: Mapping[str, str] | None = None) -> int:
    """``kcm cloud-controller-manager``: parse, refuse to run without a cluster, then serve
    as ``kcm run`` does; returns the exit code."""
    import sys

    from ._run import run

    settings = parse_ccm_args(argv)
    env = os.environ if environ is None else environ
    if settings.embedded(env):
        print(
            f"{PROG}: error: no cluster: pass --kubeconfig or --master (or set $KUBECONFIG, "
            "or run in a pod); the cloud controller manager never starts an embedded API "
            f"server; see {PROG} --help",
            file=sys.stderr,
        )
        return 2
    return run(settings, environ=env)
