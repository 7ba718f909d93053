"""A pod template as ControllerRevision data: the patch that puts the template back.

The StatefulSet and DaemonSet controllers keep their history as ControllerRevisions whose
``data`` is a strategic merge patch restoring the owner's template,
``{"spec": {"template": {..., "$patch": "replace"}}}`` (their ``getPatch``), which is also what
``kubectl rollout undo`` applies. Go writes the template as its struct encoding (after a round
trip through a map, so keys sorted): that always has ``metadata.creationTimestamp: null`` and
``resources: {}`` in every container, which an API server's JSON (and kcm's models) may leave
out. :func:`template_patch` puts them back, so the revision's bytes, and therefore its hash
(:func:`~kcm.controllerkit.hash_controller_revision`), are Go's for a template the API server
serves as kube-apiserver does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kcm.models import from_dict, to_dict
from kcm.models.core_v1 import PodTemplateSpec

__all__ = ["template_from_patch", "template_patch"]

_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def template_patch(template: PodTemplateSpec | None) -> dict[str, Any]:
    """The revision data restoring ``template``: ``{"spec": {"template": {...,
    "$patch": "replace"}}}``, the template as Go's struct encoding writes it (see the module
    docstring)."""
    data: dict[str, Any] = to_dict(template) if template is not None else {}
    _go_template(data)
    data["$patch"] = "replace"
    return {"spec": {"template": data}}


def template_from_patch(data: Any) -> PodTemplateSpec | None:
    """The template a revision's ``data`` (:func:`template_patch`) restores; None when it holds
    none.

    Raises:
        kcm.errors.DecodeError: the template in ``data`` is not a pod template.
    """
    spec = data.get("spec") if isinstance(data, Mapping) else None
    template = spec.get("template") if isinstance(spec, Mapping) else None
    if not isinstance(template, Mapping):
        return None
    return from_dict(PodTemplateSpec, {k: v for k, v in template.items() if k != "$patch"})


def _go_template(template: dict[str, Any]) -> None:
    """Add what Go's encoding of a ``PodTemplateSpec`` always writes (non-pointer structs)."""
    _go_object_meta(template)
    spec = template.setdefault("spec", {})
    spec.setdefault("containers", None)
    for key in _CONTAINER_LISTS:
        for container in spec.get(key) or ():
            container.setdefault("resources", {})
    for volume in spec.get("volumes") or ():
        claim = (volume.get("ephemeral") or {}).get("volumeClaimTemplate")
        if isinstance(claim, dict):
            _go_object_meta(claim)
            claim.setdefault("spec", {}).setdefault("resources", {})


def _go_object_meta(obj: dict[str, Any]) -> None:
    obj.setdefault("metadata", {}).setdefault("creationTimestamp", None)
