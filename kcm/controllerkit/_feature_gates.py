"""Feature gates as kube-controller-manager reads ``--feature-gates`` (component-base's
``featuregate``): a gate is on when set so, else when ``AllAlpha``/``AllBeta`` turns its stage
on, else by its default. The known gates and defaults are Kubernetes 1.24's, recorded from
kube-controller-manager's ``--help`` by ``scripts/generate_kube_flags.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["KNOWN_FEATURE_GATES", "FeatureGate", "FeatureGates", "feature_gates"]


@dataclass(frozen=True)
class FeatureGate:
    """One known gate: its default and stage (``ALPHA``, ``BETA``, ``GA``, ``DEPRECATED``)."""

    name: str
    default: bool
    stage: str


def _load() -> Mapping[str, FeatureGate]:
    data = json.loads((Path(__file__).with_name("_feature_gates_1_24.json")).read_text())
    return MappingProxyType(
        {name: FeatureGate(name, gate["default"], gate["stage"]) for name, gate in data.items()}
    )


KNOWN_FEATURE_GATES: Mapping[str, FeatureGate] = _load()
"""Kubernetes 1.24's feature gates by name."""

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class FeatureGates:
    """The gates one controller manager runs with: explicit settings over the defaults.

    Raises:
        ValueError: a gate that is not known (kube's ``unrecognized feature gate: NAME``).
    """

    def __init__(
        self,
        settings: Mapping[str, bool] | None = None,
        *,
        known: Mapping[str, FeatureGate] = KNOWN_FEATURE_GATES,
    ) -> None:
        for name in settings or {}:
            if name not in known:
                raise ValueError(f"unrecognized feature gate: {name}")
        self._settings = MappingProxyType(dict(settings or {}))
        self._known = known

    @staticmethod
    def parse(text: str) -> dict[str, bool]:
        """``Name=true,Other=false`` (pflag's mapStringBool, Go's booleans) into a mapping.

        Raises:
            ValueError: a pair without ``=`` or with a value that is not a Go boolean, with
                kube's messages.
        """
        out: dict[str, bool] = {}
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            name, sep, value = part.partition("=")
            name, value = name.strip(), value.strip()
            if not sep:
                raise ValueError(f"missing bool value for {name}")
            if value in _TRUE:
                out[name] = True
            elif value in _FALSE:
                out[name] = False
            else:
                raise ValueError(
                    f"invalid value of {name}={value}, err: strconv.ParseBool: parsing "
                    f'"{value}": invalid syntax'
                )
        return out

    @property
    def settings(self) -> Mapping[str, bool]:
        """The gates set explicitly (``--feature-gates``)."""
        return self._settings

    def enabled(self, name: str) -> bool:
        """Whether ``name`` is on.

        Raises:
            KeyError: ``name`` is not a known gate (a typo in a controller).
        """
        if name not in self._known:
            raise KeyError(f"unrecognized feature gate: {name}")
        if name in self._settings:
            return self._settings[name]
        gate = self._known[name]
        if gate.stage == "ALPHA" and self._settings.get("AllAlpha"):
            return True
        if gate.stage == "BETA" and self._settings.get("AllBeta"):
            return True
        return gate.default

    def __repr__(self) -> str:
        return f"FeatureGates({dict(self._settings)!r})"


def feature_gates(manager: Any) -> FeatureGates:
    """The gates ``manager`` runs with (``kcm`` hands each controller a manager whose
    ``feature_gates`` holds ``--feature-gates``); the defaults for a plain Manager."""
    gates = getattr(manager, "feature_gates", None)
    return gates if isinstance(gates, FeatureGates) else FeatureGates()
