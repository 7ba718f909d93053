"""The storage version garbage collector: StorageVersion entries of API servers whose
identity Lease is gone are removed.

kube-controller-manager's ``storage-version-gc``. It runs only with the ``APIServerIdentity``
and ``StorageVersionAPI`` feature gates on (both off by default in 1.24, as kcm); otherwise it
is skipped with that reason. See docs/controllers.md#storage-version-gc.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, ControllerDisabled, add_controller
from kcm.runtime import Manager

from ._controller import IDENTITY_COMPONENT_LABEL as IDENTITY_COMPONENT_LABEL
from ._controller import StorageVersionGC as StorageVersionGC
from ._gates import REQUIRED_GATES as REQUIRED_GATES
from ._gates import feature_gate as feature_gate
from ._versions import live_entries as live_entries
from ._versions import with_entries as with_entries

NAME = "storage-version-gc"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube-controller-manager runs one worker per queue."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the controller and add it (leader-elected).

    Raises:
        ControllerDisabled: a required feature gate is off.
    """
    off = [gate for gate in REQUIRED_GATES if not feature_gate(manager, gate)]
    if off:
        raise ControllerDisabled(
            f'"{NAME}" is disabled because the feature gate{"s" if len(off) > 1 else ""} '
            f"{' and '.join(off)} {'are' if len(off) > 1 else 'is'} off"
        )
    add_controller(manager, NAME, StorageVersionGC, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "IDENTITY_COMPONENT_LABEL",
    "NAME",
    "REQUIRED_GATES",
    "StorageVersionGC",
    "add_to_manager",
    "feature_gate",
    "live_entries",
    "with_entries",
]
