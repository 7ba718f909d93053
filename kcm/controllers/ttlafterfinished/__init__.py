"""The TTL-after-finished controller: deletes finished Jobs once
``spec.ttlSecondsAfterFinished`` has passed (kube-controller-manager's ``ttl-after-finished``).
See docs/controllers.md."""

from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import HELP as HELP
from ._controller import NAME as NAME
from ._controller import TTLAfterFinishedController as TTLAfterFinishedController
from ._controller import add_to_manager as add_to_manager
from ._controller import expire_at as expire_at
from ._controller import needs_cleanup as needs_cleanup

__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "TTLAfterFinishedController",
    "add_to_manager",
    "expire_at",
    "needs_cleanup",
]
