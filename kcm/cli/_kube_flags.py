"""kube-controller-manager 1.24's flags that kcm does not implement: accepted, parsed with
their Go type, and without effect (one log line each at startup), so a kubeadm manifest's
command line runs unchanged. ``--feature-gates`` is parsed and checked against 1.24's gates.

The flag list is ``_kube_controller_manager_flags.json``, recorded from the real binary's
``--help`` by ``scripts/generate_kube_flags.py``. A flag kcm implements is defined by its own
group first; this module adds only the flags the parser does not have yet.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kcm.controllerkit import FeatureGates

from ._values import parse_bool, parse_duration

__all__ = [
    "KUBE_DEFAULT_CONTROLLERS",
    "KUBE_FLAGS",
    "add_compatibility_flags",
    "add_feature_gates_flag",
    "compatibility_flags_given",
]

_RECORDED = json.loads(Path(__file__).with_name("_kube_controller_manager_flags.json").read_text())
KUBE_FLAGS: list[dict[str, Any]] = _RECORDED["flags"]
"""kube-controller-manager's flags: name, short name, Go type, ``--help`` group, default."""
KUBE_DEFAULT_CONTROLLERS: frozenset[str] = frozenset(_RECORDED["controllers"]["all"]) - frozenset(
    _RECORDED["controllers"]["disabled_by_default"]
)
"""The controllers kube-controller-manager 1.24 runs with its default ``--controllers=*``."""

_DEST_PREFIX = "compat_"


def _int(text: str) -> int:
    try:
        return int(str(text).strip(), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _float(text: str) -> float:
    try:
        return float(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _ip(text: str) -> str:
    try:
        return str(ipaddress.ip_address(str(text).strip()))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IP address") from None


def _pairs(text: str) -> dict[str, str]:
    """pflag's stringToString: ``k=v,k2=v2``."""
    out: dict[str, str] = {}
    for part in str(text).split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{part!r} must be formatted as key=value")
        out[key.strip()] = value.strip()
    return out


def _bool_map(text: str) -> dict[str, bool]:
    try:
        return FeatureGates.parse(str(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_TYPES: Mapping[str, Callable[[str], Any]] = {
    "bool": parse_bool,
    "duration": parse_duration,
    "float": _float,
    "float32": _float,
    "int": _int,
    "int32": _int,
    "int64": _int,
    "uint": _int,
    "ip": _ip,
    "mapStringBool": _bool_map,
    "stringToString": _pairs,
}
"""Go flag type → parser; every other type (string, strings, quantity, ...) is text."""


_GO_TYPES: Mapping[str, str] = {flag["name"]: flag["type"] for flag in KUBE_FLAGS}


def kube_flag_parser(option: str) -> tuple[str, Callable[[str], Any]]:
    """The Go type of kube-controller-manager's ``option`` (``--log-flush-frequency``) and the
    parser of its values (text for types kcm does not check, and for an unknown flag)."""
    go_type = _GO_TYPES.get(option.lstrip("-"), "string")
    return go_type, _TYPES.get(go_type, str)


class _Accumulate(argparse.Action):
    """A repeated slice or map flag adds to what the earlier ones gave (pflag's rule)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        current = getattr(namespace, self.dest, None)
        if isinstance(values, dict):
            merged: Any = {**(current if isinstance(current, dict) else {}), **values}
        else:
            parts = [p.strip() for p in str(values).split(",") if p.strip()]
            merged = [*(current if isinstance(current, list) else []), *parts]
        setattr(namespace, self.dest, merged)


def add_compatibility_flags(
    parser: argparse.ArgumentParser, bool_flag: Callable[..., None]
) -> None:
    """Every kube-controller-manager flag ``parser`` does not define yet, as a no-op with its
    Go type (``bool_flag`` adds a pflag-style boolean); call after every real flag."""
    taken = {option for action in parser._actions for option in action.option_strings}
    group = parser.add_argument_group(
        "accepted for compatibility",
        "kube-controller-manager 1.24's flags that kcm does not implement: parsed, and kcm "
        "logs that each one given has no effect",
    )
    for flag in KUBE_FLAGS:
        option = f"--{flag['name']}"
        if option in taken:
            continue
        dest = _DEST_PREFIX + flag["name"].replace("-", "_")
        what = f"kube-controller-manager's {flag['type']}; no effect in kcm"
        if flag["type"] == "bool":
            bool_flag(group, option, default=argparse.SUPPRESS, help=what, dest=dest)
            continue
        kind = _TYPES.get(flag["type"], str)
        metavar = flag["type"].upper() if flag["type"].isalpha() else "VALUE"
        if flag["type"] in ("strings", "mapStringBool", "stringToString"):  # repeatable
            group.add_argument(
                option,
                dest=dest,
                type=kind,
                default=argparse.SUPPRESS,
                metavar=metavar,
                help=what,
                action=_Accumulate,
            )
            continue
        group.add_argument(
            option, dest=dest, type=kind, default=argparse.SUPPRESS, metavar=metavar, help=what
        )


def compatibility_flags_given(args: argparse.Namespace) -> tuple[str, ...]:
    """The no-op flags given (on the command line or in ``--config``), as ``--name``."""
    return tuple(
        sorted(
            "--" + name[len(_DEST_PREFIX) :].replace("_", "-")
            for name in vars(args)
            if name.startswith(_DEST_PREFIX)
        )
    )


def _feature_gates(text: str) -> dict[str, bool]:
    """``--feature-gates``: parsed, and every gate checked against 1.24's (kube's messages)."""
    try:
        settings = FeatureGates.parse(text)
        FeatureGates(settings)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f'invalid argument "{text}" for "--feature-gates" flag: {exc}'
        ) from None
    return settings


def add_feature_gates_flag(group: Any) -> None:
    """``--feature-gates Name=true,Other=false`` (repeatable; later settings win)."""
    group.add_argument(
        "--feature-gates",
        dest="feature_gates",
        type=_feature_gates,
        action=_Accumulate,
        default={},
        metavar="NAME=BOOL,...",
        help="feature gates as kube-controller-manager 1.24 knows them (an unknown gate is a "
        "usage error); controllers read them through kcm.controllerkit.feature_gates",
    )
