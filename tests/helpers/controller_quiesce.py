"""Deterministic settling for controller integration tests: wait until nothing is left to do.

A negative check ("no pod was created", "the Job still exists") is only meaningful once the
controllers have acted on everything that happened so far. Sleeping for a while and hoping
is not that. :func:`quiesce` returns once, at one moment,

1. every informer of the factory holds exactly what the API server holds (the same objects
   at the same resourceVersions: no watch event is still on its way),
2. every runnable task has run (handler buffers delivered into the work queues, due delayed
   keys promoted): on a :class:`FakeClock` via ``advance(0)``, else anyio's
   ``wait_all_tasks_blocked``,
3. every controller's queue is empty with no reconcile in flight, and no reconcile finished
   while 1 and 2 were checked, and ``busy()`` (another actor, e.g. a fake kubelet) is False.

Keys waiting for a later time (``requeue_after`` on a fake clock) do not count: nothing more
happens until the test advances the clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import anyio

from kcm.client import ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models import resource_info_for
from kcm.runtime import Controller
from kcm.testing import FakeClock

__all__ = ["caches_match_server", "quiesce"]


async def caches_match_server(factory: SharedInformerFactory, client: ApiClient) -> bool:
    """Every typed informer of ``factory`` holds what a fresh LIST returns (names and
    resourceVersions); informers of kinds without a model are not compared."""
    for key, informer in factory.informers().items():
        try:
            resource_info_for(key.model)
        except (KeyError, LookupError, ValueError, AttributeError):
            continue
        api = client.api(key.model, key.namespace or None)
        listed = await api.list(
            label_selector=key.label_selector or None, field_selector=key.field_selector or None
        )
        server = {
            (o.metadata.namespace or "", o.metadata.name or "", o.metadata.resource_version)
            for o in listed.items
        }
        cached = {
            (o.metadata.namespace or "", o.metadata.name or "", o.metadata.resource_version)
            for _, o in informer.indexer.items()
        }
        if server != cached:
            return False
    return True


def _idle(controllers: Iterable[Controller[Any]]) -> bool:
    return all(len(c.queue) == 0 and not c.queue.processing for c in controllers)


def _counts(controllers: Iterable[Controller[Any]]) -> list[dict[str, int]]:
    return [c.reconcile_counts for c in controllers]


async def quiesce(
    controllers: Iterable[Controller[Any]],
    factory: SharedInformerFactory,
    client: ApiClient,
    *,
    clock: FakeClock | None = None,
    busy: Callable[[], bool] = lambda: False,
    within: float = 10.0,
) -> None:
    """Wait until the controllers have nothing left to do (see the module docstring).

    Raises:
        TimeoutError: they were still busy after ``within`` seconds of real time.
    """
    controllers = list(controllers)

    async def settle() -> None:
        if clock is not None:
            await clock.advance(0)
        else:
            await anyio.wait_all_tasks_blocked()

    with anyio.fail_after(within):
        while True:
            await settle()
            before = _counts(controllers)
            if _idle(controllers) and not busy() and await caches_match_server(factory, client):
                await settle()
                if _idle(controllers) and not busy() and _counts(controllers) == before:
                    return
            await anyio.sleep(0.005)
