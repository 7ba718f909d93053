"""Deleting an owner's pods with expectations: what ReplicaSet-like and DaemonSet controllers
do the same way.

The deletes run concurrently; each is expected before it is sent (the caller called
``expect_deletions``), so a delete that fails, or finds the pod already gone, is marked observed
at once: the informer will never show it, and the owner must not wait for it until the
expectations expire. Events are kube-controller-manager's (``SuccessfulDelete`` /
``FailedDelete`` with ``Error deleting: ...``).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import anyio

from kcm.client import ApiClient
from kcm.errors import KcmError, NotFound
from kcm.models import object_key
from kcm.models.core_v1 import Pod
from kcm.record import EventRecorder
from kcm.runtime import HasMetadata

from ._error_text import error_text
from ._expectations import UIDTrackingControllerExpectations

__all__ = ["PodDeletions", "delete_pods"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class PodDeletions:
    """What :func:`delete_pods` did.

    Attributes:
        deleted: uids of the pods that are gone (deleted now, or already not found).
        errors: one error per delete the server refused.
    """

    deleted: set[str] = field(default_factory=set)
    errors: list[Exception] = field(default_factory=list)


async def delete_pods(
    client: ApiClient,
    namespace: str,
    pods: Iterable[Pod],
    *,
    owner: HasMetadata,
    key: Hashable,
    expectations: UIDTrackingControllerExpectations,
    recorder: EventRecorder,
) -> PodDeletions:
    """Delete ``pods`` of ``owner`` (expectations key ``key``) concurrently.

    A pod already gone counts as deleted without an event; a refused delete records a
    ``FailedDelete`` Warning and lands in :attr:`PodDeletions.errors` (the caller decides whether
    to raise); both are observed in ``expectations`` at once.
    """
    api = client.api(Pod, namespace)
    result = PodDeletions()

    async def delete(pod: Pod) -> None:
        name = str(pod.metadata.name)
        try:
            await api.delete(name)
        except NotFound:
            expectations.deletion_observed(key, object_key(pod))
            result.deleted.add(pod.metadata.uid or "")
            return
        except KcmError as exc:
            expectations.deletion_observed(key, object_key(pod))
            recorder.event(owner, "Warning", "FailedDelete", f"Error deleting: {error_text(exc)}")
            result.errors.append(exc)
            return
        result.deleted.add(pod.metadata.uid or "")
        logger.debug("%s deleted pod %s", key, name)
        recorder.event(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")

    async with anyio.create_task_group() as tg:
        for pod in pods:
            tg.start_soon(delete, pod)
    return result
