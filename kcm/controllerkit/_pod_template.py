"""Pods from an owner's template (``controller.GetPodFromTemplate``, ``getPodsPrefix``).

How a ReplicaSet-like owner names and builds the pods it creates (§2).
"""

from __future__ import annotations

import re

from kcm.models.core_v1 import Pod, PodTemplateSpec
from kcm.models.meta_v1 import ObjectMeta, OwnerReference

__all__ = ["pod_from_template", "pod_name_prefix"]

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


def pod_name_prefix(owner_name: str) -> str:
    """``generateName`` for the owner's pods: ``"<owner>-"``, or the owner's name alone when
    that prefix is not a valid pod name prefix (``getPodsPrefix``)."""
    prefix = f"{owner_name}-"
    masked = prefix[:-1] + "a"  # a trailing dash is fine in a prefix (maskTrailingDash)
    if len(masked) <= 253 and _DNS1123_SUBDOMAIN.match(masked):
        return prefix
    return owner_name


def pod_from_template(
    template: PodTemplateSpec, owner_name: str, controller_ref: OwnerReference | None
) -> Pod:
    """A pod to create for an owner (``GetPodFromTemplate``): ``generateName`` from the owner's
    name, labels, annotations and finalizers from the template's metadata, the template's
    spec, and the controller reference.

    Raises:
        ValueError: the template has no labels (the controller could never find its pods).
    """
    meta = template.metadata or ObjectMeta()
    if not meta.labels:
        raise ValueError("unable to create pods, no labels")
    return Pod(
        metadata=ObjectMeta(
            generate_name=pod_name_prefix(owner_name),
            labels=dict(meta.labels),
            annotations=dict(meta.annotations) if meta.annotations else None,
            finalizers=list(meta.finalizers) if meta.finalizers else None,
            owner_references=[controller_ref] if controller_ref is not None else None,
        ),
        spec=template.spec,
    )
