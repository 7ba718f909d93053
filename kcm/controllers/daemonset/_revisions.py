"""What a DaemonSet's ControllerRevisions hold, and which one is current (``getPatch``,
``Match``, ``snapshot``'s object).

A revision's ``data`` is a strategic merge patch that puts the template back:
``{"spec": {"template": {..., "$patch": "replace"}}}``, which is also what
``kubectl rollout undo daemonset`` applies. Go writes it from the typed object, so the template
carries ``metadata.creationTimestamp: null`` and ``resources: {}`` in every container; kcm
writes the same. A revision is current when its data equals the DaemonSet's, nil and empty
values aside (a revision Go wrote matches the one kcm would write).
"""

from __future__ import annotations

from typing import Any

from kcm.controllerkit import prune_empty
from kcm.models import resource_info_for, to_dict
from kcm.models.apps_v1 import ControllerRevision, DaemonSet
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import new_controller_ref

from ._pods import CONTROLLER_REVISION_HASH_LABEL

__all__ = ["matches_revision", "new_revision", "revision_data"]

_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def revision_data(ds: DaemonSet) -> dict[str, Any]:
    """The patch restoring ``ds``'s template (the data of its current revision)."""
    template: dict[str, Any] = to_dict(ds.spec.template) if ds.spec and ds.spec.template else {}
    template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    spec = template.setdefault("spec", {})
    for field in _CONTAINER_LISTS:
        for container in spec.get(field) or ():
            container.setdefault("resources", {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def matches_revision(ds: DaemonSet, revision: ControllerRevision) -> bool:
    """Whether ``revision`` holds ``ds``'s current template."""
    return bool(prune_empty(revision.data) == prune_empty(revision_data(ds)))


def new_revision(ds: DaemonSet, hash: str, number: int) -> ControllerRevision:
    """The revision ``<ds>-<hash>`` of ``ds``'s template, numbered ``number``: the template's
    labels plus the hash label, the DaemonSet's annotations, a controller reference."""
    template = ds.spec.template if ds.spec else None
    labels = dict((template.metadata.labels if template and template.metadata else None) or {})
    labels[CONTROLLER_REVISION_HASH_LABEL] = hash
    info = resource_info_for(DaemonSet)
    return ControllerRevision(
        metadata=ObjectMeta(
            name=f"{ds.metadata.name}-{hash}",
            namespace=ds.metadata.namespace,
            labels=labels,
            annotations=dict(ds.metadata.annotations) if ds.metadata.annotations else None,
            owner_references=[new_controller_ref(ds, info.api_version, info.kind)],
        ),
        data=revision_data(ds),
        revision=number,
    )
