"""Entry point of the ``kcm`` console script."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .._version import __version__
from . import _apiserver


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kcm",
        description="kcm: a Kubernetes controller manager written on a Python client-go.",
    )
    parser.add_argument("--version", action="version", version=f"kcm {__version__}")
    subparsers = parser.add_subparsers(dest="command")
    _apiserver.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kcm`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    code: int = func(args)
    return code
