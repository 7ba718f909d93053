"""A sync that keeps failing is dropped from the queue after a number of retries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kcm.models import ObjectKey
from kcm.runtime import Result, TerminalError

__all__ = ["MAX_SYNC_RETRIES", "sync_with_retry_limit"]

MAX_SYNC_RETRIES = 15
"""Go's ``maxRetries`` of the Endpoints, EndpointSlice and EndpointSlice mirroring
controllers."""


async def sync_with_retry_limit(
    sync: Callable[[ObjectKey], Awaitable[None]],
    key: ObjectKey,
    *,
    num_requeues: Callable[[ObjectKey], int],
    what: str,
    max_retries: int = MAX_SYNC_RETRIES,
) -> Result:
    """Run ``sync(key)``; an error is raised again for the runtime to retry with backoff,
    until ``key`` has been requeued ``max_retries`` times: then it becomes a
    :class:`~kcm.runtime.TerminalError` (logged, not retried; the key's next event syncs it
    again), as Go's ``handleErr`` drops it.

    Args:
        sync: the controller's sync of one key.
        key: the key.
        num_requeues: the queue's count of the key's retries (``queue.num_requeues``).
        what: how the message names the key's kind (``"service"``, ``"Endpoints"``).
        max_retries: retries before the key is dropped.

    Raises:
        TerminalError: the sync failed after ``max_retries`` retries.
        Exception: whatever ``sync`` raised, before that.
    """
    try:
        await sync(key)
    except Exception as exc:
        if num_requeues(key) >= max_retries:
            raise TerminalError(
                f"dropping {what} {key} out of the queue after {max_retries} failed syncs: {exc}"
            ) from exc
        raise
    return Result()
