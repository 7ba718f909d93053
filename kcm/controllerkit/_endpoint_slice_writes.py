"""The writes of an EndpointSlice writer's sync, in Go's order, with the tracker told of each."""

from __future__ import annotations

from collections.abc import Sequence

from kcm.client import Api
from kcm.errors import KcmError
from kcm.models.discovery_v1 import EndpointSlice

from ._endpoint_slice_tracker import EndpointSliceTracker
from ._namespaces import is_namespace_terminating

__all__ = ["write_endpoint_slices"]


def _name(endpoint_slice: EndpointSlice) -> str:
    return endpoint_slice.metadata.name or ""


async def write_endpoint_slices(
    api: Api[EndpointSlice],
    tracker: EndpointSliceTracker,
    *,
    create: Sequence[EndpointSlice],
    update: Sequence[tuple[EndpointSlice, EndpointSlice]],
    delete: Sequence[EndpointSlice],
    owner_deleting: bool = False,
) -> None:
    """Create, then update, then delete slices, recording each result in ``tracker`` (the
    generation written, the deletion expected) so the writer's own events do not sync it
    again. Nothing is created for a deleting owner (the garbage collector is removing its
    slices); a create refused by a terminating namespace ends the writes quietly.

    Args:
        api: EndpointSlices of the owner's namespace.
        tracker: the writer's :class:`EndpointSliceTracker`.
        create: new slices.
        update: ``(original, desired)`` pairs; ``desired`` replaces ``original``.
        delete: slices to delete.
        owner_deleting: the Service (or Endpoints) has a deletion timestamp.

    Raises:
        KcmError: a write failed (the writes after it were not attempted).
    """
    if not owner_deleting:
        for endpoint_slice in create:
            try:
                created = await api.create(endpoint_slice)
            except KcmError as exc:
                if is_namespace_terminating(exc):
                    return
                raise
            tracker.update(created)
    for original, desired in update:
        tracker.update(await api.update(original, desired))
    for endpoint_slice in delete:
        await api.delete(_name(endpoint_slice))
        tracker.expect_deletion(endpoint_slice)
