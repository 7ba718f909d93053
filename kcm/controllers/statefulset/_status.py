"""A StatefulSet's status as one sync counts it, and when it is worth writing.

The counts are kept in a mutable :class:`SetStatus` while the sync creates and deletes pods
(Go adjusts its status struct as it goes) and become a ``StatefulSetStatus`` written as Go
writes it: ``replicas``, ``availableReplicas`` and ``collisionCount`` always, the other counts
only when not 0, no conditions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from kcm.models import to_dict
from kcm.models.apps_v1 import StatefulSet, StatefulSetStatus

from ._spec import ROLLING_UPDATE, update_strategy

__all__ = ["SetStatus", "complete_rolling_update", "status_differs", "status_patch"]

_STATUS_FIELDS = tuple(f.encode_name for f in msgspec.structs.fields(StatefulSetStatus))


@dataclass
class SetStatus:
    """The status one sync computes (``apps.StatefulSetStatus``)."""

    observed_generation: int
    current_revision: str
    update_revision: str
    collision_count: int
    replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    current_replicas: int = 0
    updated_replicas: int = 0

    def to_model(self) -> StatefulSetStatus:
        """The status to write, with Go's ``omitempty`` fields left out when 0 or empty."""
        return StatefulSetStatus(
            observed_generation=self.observed_generation or None,
            replicas=self.replicas,
            ready_replicas=self.ready_replicas or None,
            current_replicas=self.current_replicas or None,
            updated_replicas=self.updated_replicas or None,
            current_revision=self.current_revision or None,
            update_revision=self.update_revision or None,
            collision_count=self.collision_count,
            available_replicas=self.available_replicas,
        )


def complete_rolling_update(sts: StatefulSet, status: SetStatus) -> None:
    """Once every pod is updated and ready, the update revision becomes the current one
    (``completeRollingUpdate``; RollingUpdate only)."""
    if (
        update_strategy(sts) == ROLLING_UPDATE
        and status.updated_replicas == status.replicas
        and status.ready_replicas == status.replicas
    ):
        status.current_replicas = status.updated_replicas
        status.current_revision = status.update_revision


def status_differs(sts: StatefulSet, status: SetStatus) -> bool:
    """Whether ``status`` is news for ``sts`` (``inconsistentStatus``): a newer observed
    generation, or another count or revision. The collision count alone is not."""
    old = sts.status or StatefulSetStatus()
    return (
        status.observed_generation > (old.observed_generation or 0)
        or status.replicas != (old.replicas or 0)
        or status.current_replicas != (old.current_replicas or 0)
        or status.ready_replicas != (old.ready_replicas or 0)
        or status.updated_replicas != (old.updated_replicas or 0)
        or status.current_revision != (old.current_revision or "")
        or status.available_replicas != (old.available_replicas or 0)
        or status.update_revision != (old.update_revision or "")
    )


def status_patch(resource_version: str | None, status: SetStatus) -> dict[str, Any]:
    """A merge patch making the set's status exactly ``status`` (fields it leaves out are
    removed, as Go's status PUT replaces the whole status), carrying ``resource_version`` so a
    write based on a stale read is refused with a conflict."""
    wanted = to_dict(status.to_model())
    body: dict[str, Any] = {"status": {name: wanted.get(name) for name in _STATUS_FIELDS}}
    if resource_version:
        body["metadata"] = {"resourceVersion": resource_version}
    return body
