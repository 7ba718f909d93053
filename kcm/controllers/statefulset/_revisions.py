"""A StatefulSet's ControllerRevisions: which is current, which is the update, and which may go.

A revision's ``data`` is the patch that restores the set's pod template
(:func:`kcm.controllerkit.template_patch`), its name ``<set>-<hash>``, its number one more
than the newest. The *update* revision is the one equal to the set's template now (an equal
older one is renumbered to be the newest: a rollback); the *current* revision is the one
``status.currentRevision`` names, else the update revision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from kcm.controllerkit import (
    History,
    equal_revision,
    find_equal_revisions,
    new_controller_revision,
    template_from_patch,
    template_patch,
)
from kcm.models import resource_info_for
from kcm.models.apps_v1 import ControllerRevision, StatefulSet
from kcm.models.core_v1 import Pod

from ._identity import pod_revision
from ._spec import revision_history_limit

__all__ = [
    "apply_revision",
    "new_revision",
    "next_revision_number",
    "revisions_to_delete",
    "stateful_set_revisions",
]

_KIND = resource_info_for(StatefulSet)


def new_revision(sts: StatefulSet, number: int, collision_count: int) -> ControllerRevision:
    """The revision of ``sts``'s template now (``newRevision``), numbered ``number``: labelled
    with the template's labels and the hash, annotated with the set's annotations."""
    template = sts.spec.template if sts.spec else None
    labels = template.metadata.labels if template and template.metadata else None
    revision = new_controller_revision(
        sts, _KIND, labels, template_patch(template), number, collision_count
    )
    annotations = dict(sts.metadata.annotations or {}) or None
    meta = msgspec.structs.replace(revision.metadata, annotations=annotations)
    return msgspec.structs.replace(revision, metadata=meta)


def apply_revision(sts: StatefulSet, revision: ControllerRevision) -> StatefulSet:
    """``sts`` with the template ``revision`` holds (``ApplyRevision``)."""
    template = template_from_patch(revision.data)
    if template is None or sts.spec is None:
        return sts
    return msgspec.structs.replace(sts, spec=msgspec.structs.replace(sts.spec, template=template))


def next_revision_number(revisions: Sequence[ControllerRevision]) -> int:
    """One more than the last of the sorted ``revisions``; 1 for none (``nextRevision``)."""
    return (revisions[-1].revision or 0) + 1 if revisions else 1


async def stateful_set_revisions(
    history: History, sts: StatefulSet, revisions: Sequence[ControllerRevision]
) -> tuple[ControllerRevision, ControllerRevision, int]:
    """The current and update revisions of ``sts`` and its collision count
    (``getStatefulSetRevisions``); creates the update revision, or renumbers an equal older
    one, as needed.

    Args:
        revisions: the set's revisions, oldest first
            (:func:`kcm.controllerkit.sort_controller_revisions`).

    Raises:
        ApiError, TransportError: creating or renumbering a revision failed.
    """
    status = sts.status
    collision_count = (status.collision_count if status else None) or 0
    update = new_revision(sts, next_revision_number(revisions), collision_count)
    equal = find_equal_revisions(revisions, update)
    if equal and equal_revision(revisions[-1], equal[-1]):
        update = revisions[-1]  # the newest revision already is the template: no change
    elif equal:
        update = await history.update_controller_revision(equal[-1], update.revision or 0)
    else:
        update, collision_count = await history.create_controller_revision(
            sts, update, collision_count
        )
    wanted = status.current_revision if status else None
    current = next((r for r in revisions if r.metadata.name == wanted), update)
    return current, update, collision_count


def revisions_to_delete(
    sts: StatefulSet,
    pods: Iterable[Pod],
    revisions: Sequence[ControllerRevision],
    current: ControllerRevision | None,
    update: ControllerRevision | None,
) -> list[ControllerRevision]:
    """The oldest revisions beyond ``revisionHistoryLimit`` that are not live
    (``truncateHistory``): live are the current and update revisions and every revision a
    pod was built from.

    Args:
        revisions: sorted oldest first.
    """
    live = {r.metadata.name for r in (current, update) if r is not None}
    live.update(pod_revision(p) for p in pods)
    history = [r for r in revisions if r.metadata.name not in live]
    excess = len(history) - revision_history_limit(sts)
    return history[:excess] if excess > 0 else []
