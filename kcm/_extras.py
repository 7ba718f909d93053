"""Optional dependencies: which extra provides which module, and the one import helper.

The base install is the library (client, informers, work queues, leader election, runtime,
models); the embedded API server, the built-in controllers and the ``kcm`` command need
extras. Every optional import goes through :func:`require`, so a missing module is one
line that says what to install, never a traceback from deep inside kcm.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from kcm.errors import MissingExtra

__all__ = ["DISTRIBUTION", "EXTRAS", "extra_of", "require"]

DISTRIBUTION = "pykcm"
"""The name kcm is published under (``kcm`` on the package index is another project)."""

EXTRAS: dict[str, tuple[str, ...]] = {
    "aiohttp": ("aiohttp",),
    "cli": ("rich", "shtab"),
    "controllers": ("cryptography", "jwt", "croniter"),
    "server": ("hypercorn", "cryptography", "jwt"),
}
"""Top-level modules each extra adds to the base install (``kcm[cli]`` also pulls in
``server``, ``controllers``, ``aiohttp`` and ``uvloop``; ``kcm[all]`` is ``cli``)."""


def extra_of(module: str) -> str | None:
    """The extra that provides ``module`` (or a submodule of it), preferring the narrowest
    (``server`` for hypercorn, ``controllers`` for croniter); None for a base module."""
    top = module.split(".")[0]
    for extra in ("controllers", "server", "aiohttp", "cli"):
        if top in EXTRAS[extra]:
            return extra
    return None


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """Import ``module``, which ``feature`` needs and ``extra`` provides.

    Raises:
        MissingExtra: the module (or one it imports) is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or module
        raise MissingExtra(
            f"{feature} needs kcm[{extra}]: pip install '{DISTRIBUTION}[{extra}]' "
            f"({missing} is not installed)",
            extra=extra,
            module=missing,
        ) from None
