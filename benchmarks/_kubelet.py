"""The stand-in kubelet of the controller benchmarks: every pod the informer shows becomes
Running and Ready, once (``controllers_scale.py``, ``controllers_vs_go.py``).

There is no kubelet in these runs, and a Deployment is only done when its pods are Ready, so
the benchmark plays that part: register a :class:`StandInKubelet` as the Pod informer's
handler and run :meth:`StandInKubelet.run` in the benchmark's task group.
"""

from __future__ import annotations

import time

import anyio

from kcm.client import ApiClient
from kcm.models.core_v1 import Pod

__all__ = ["StandInKubelet"]


class StandInKubelet:
    """Patches each new, not deleting pod's status to ``Running`` with ``Ready: True``,
    at most ``concurrency`` patches at a time; a failed patch (the pod went) is dropped.
    Build it inside the event loop (it makes an :class:`anyio.Event`).

    Args:
        client: the client the status patches are sent with.
        concurrency: patches in flight at most.
    """

    def __init__(self, client: ApiClient, *, concurrency: int = 64) -> None:
        self._client = client
        self._limiter = anyio.CapacityLimiter(concurrency)
        self._pending: list[Pod] = []
        self._wake = anyio.Event()
        self._marked: set[str] = set()
        self.patches_sent = 0
        """Status patches sent (the benchmark's own requests, not the controllers')."""

    @property
    def marked(self) -> int:
        """Pods made (or being made) Running and Ready."""
        return len(self._marked)

    def on_add(self, obj: Pod, *, is_in_initial_list: bool) -> None:
        self._pending.append(obj)
        self._wake.set()

    def on_update(self, old: Pod, new: Pod) -> None:
        pass

    def on_delete(self, obj: Pod, *, final_state_unknown: bool) -> None:
        pass

    async def run(self) -> None:
        """Mark the pods the informer adds until cancelled."""
        async with anyio.create_task_group() as tg:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                batch, self._pending = self._pending, []
                for pod in batch:
                    uid = pod.metadata.uid or ""
                    if uid not in self._marked and pod.metadata.deletion_timestamp is None:
                        self._marked.add(uid)
                        tg.start_soon(self._ready, pod)

    async def _ready(self, pod: Pod) -> None:
        async with self._limiter:
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            body = {
                "status": {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
                }
            }
            self.patches_sent += 1
            try:
                await self._client.api(Pod, pod.metadata.namespace).patch_status(
                    pod.metadata.name or "", body
                )
            except Exception:
                return
