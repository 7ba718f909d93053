"""Entry point of the ``kcm`` console script.

``kcm [flags]`` and ``kcm run [flags]`` start the controller manager; ``kcm apiserver`` serves
the embedded API server alone; ``kcm cloud-controller-manager`` runs the cloud controllers;
``kcm bench`` measures informer throughput.
Usage errors (unknown flag, bad value, unknown controller) exit with status 2 before anything
starts, with one line on stderr: ``kcm: error: <what>; see kcm --help``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kcm.errors import MissingExtra

from .._version import __version__
from . import _apiserver, _bench, _completion
from ._values import UsageErrorParser


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: ``--version`` and the commands (``run``'s flags live in
    :func:`kcm.cli._flags.build_run_parser`)."""
    parser = UsageErrorParser(
        prog="kcm",
        description="kcm: a Kubernetes controller manager written on a Python client-go.",
    )
    parser.add_argument("--version", action="version", version=f"kcm {__version__}")
    subparsers = parser.add_subparsers(dest="command")
    subparsers.add_parser(
        "run",
        help="run the controller manager (the default; kcm run --help)",
        add_help=False,
    )
    _apiserver.add_parser(subparsers)
    _bench.add_parser(subparsers)
    _completion.add_parser(subparsers)
    subparsers.add_parser(
        "cloud-controller-manager",
        help="run the cloud controllers on a cloud provider plugin (kcm cloud-controller-manager "
        "--help)",
        add_help=False,
    )
    return parser


def _run(argv: Sequence[str], prog: str) -> int:
    from ._flags import parse_run_args
    from ._run import run

    return run(parse_run_args(argv, prog=prog))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kcm`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    A missing optional dependency (a base install without ``kcm[cli]``) is one line on
    stderr naming the extra, and exit status 1.

    Raises:
        SystemExit: 0 after ``--help``/``--version``; 2 on a usage error.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except MissingExtra as exc:  # a plain install without kcm[cli]: say what to install
        print(f"kcm: error: {exc}", file=sys.stderr)
        return 1


def _dispatch(args: list[str]) -> int:
    if not args or (args[0].startswith("-") and args[0] != "--version"):
        return _run(args, "kcm")
    if args[0] == "run":
        return _run(args[1:], "kcm run")
    if args[0] == "cloud-controller-manager":
        from ._ccm import run_ccm

        return run_ccm(args[1:])
    parsed = build_parser().parse_args(args)  # --version, apiserver, bench, or a usage error
    code: int = parsed.func(parsed)
    return code
