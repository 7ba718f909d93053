"""The garbage collector controller: cascading deletion through ownerReferences.

kube-controller-manager's ``garbagecollector``: an ownership graph built from metadata-only
informers over every deletable resource (CRDs included), background, foreground and orphan
propagation, dangling owner references. See docs/controllers.md#garbage-collector.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_IGNORED_RESOURCES as DEFAULT_IGNORED_RESOURCES
from ._controller import GarbageCollectorController as GarbageCollectorController
from ._controller import filter_verbs as filter_verbs
from ._graph import Graph as Graph
from ._graph import Identity as Identity
from ._graph import Node as Node

NAME = "garbagecollector"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""``--concurrent-gc-syncs``."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the garbage collector from the manager's client, factory, clock and registry
    and add it (leader-elected)."""
    add_controller(manager, NAME, GarbageCollectorController, workers=workers)


__all__ = [
    "DEFAULT_IGNORED_RESOURCES",
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "GarbageCollectorController",
    "Graph",
    "Identity",
    "Node",
    "add_to_manager",
    "filter_verbs",
]
