"""Daemon pods: the template they are created from, whether one is up to date, and their order
(``CreatePodTemplate``, ``IsPodUpdated``, ``GetTemplateGeneration``,
``podByCreationTimestampAndPhase``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

import msgspec

from kcm.models.apps_v1 import DaemonSet
from kcm.models.core_v1 import Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import ObjectMeta

from ._placement import add_daemon_pod_tolerations

__all__ = [
    "CONTROLLER_REVISION_HASH_LABEL",
    "TEMPLATE_GENERATION_ANNOTATION",
    "TEMPLATE_GENERATION_LABEL",
    "daemon_pod_template",
    "is_pod_updated",
    "sort_daemon_pods",
    "template_generation",
]

CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"
"""Label on daemon pods and the DaemonSet's ControllerRevisions: the template hash
(``DefaultDaemonSetUniqueLabelKey``)."""
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
"""Label on daemon pods: the template generation they were made from (kept for pods of old
controllers, which compared generations instead of hashes)."""
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
"""DaemonSet annotation the API server keeps: 1 on create, one more per template change."""

_EPOCH = datetime.min.replace(tzinfo=UTC)
_INT64 = re.compile(r"[+-]?[0-9]+")


def template_generation(ds: DaemonSet) -> int | None:
    """The DaemonSet's template generation from :data:`TEMPLATE_GENERATION_ANNOTATION`; None
    without it or when it is not an integer (the hash alone decides then)."""
    text = (ds.metadata.annotations or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    if text is None or not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def daemon_pod_template(
    template: PodTemplateSpec, generation: int | None, hash: str
) -> PodTemplateSpec:
    """The template daemon pods are created from: the DaemonSet tolerations added, and the
    labels :data:`TEMPLATE_GENERATION_LABEL` (when known) and
    :data:`CONTROLLER_REVISION_HASH_LABEL` (when ``hash`` is not empty)."""
    meta = template.metadata or ObjectMeta()
    labels = dict(meta.labels or {})
    if generation is not None:
        labels[TEMPLATE_GENERATION_LABEL] = str(generation)
    if hash:
        labels[CONTROLLER_REVISION_HASH_LABEL] = hash
    spec = add_daemon_pod_tolerations(template.spec or PodSpec())
    return msgspec.structs.replace(
        template, metadata=msgspec.structs.replace(meta, labels=labels), spec=spec
    )


def is_pod_updated(pod: Pod, hash: str, generation: int | None) -> bool:
    """Whether ``pod`` runs the current template: its hash label is ``hash``, or its template
    generation label is ``generation``.

    Kubernetes 1.24 compares the generation label with the *address* of the generation (a bug
    fixed in later releases), so there only the hash counts; kcm compares values, as newer
    releases do. The two differ only for pods that carry the current generation but another
    hash, which kcm never creates.
    """
    labels = pod.metadata.labels or {}
    if hash and labels.get(CONTROLLER_REVISION_HASH_LABEL) == hash:
        return True
    return generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(generation)


def _order(pod: Pod) -> tuple[bool, datetime, str]:
    scheduled = bool(pod.spec and pod.spec.node_name)
    created = pod.metadata.creation_timestamp or _EPOCH
    return (not scheduled, created, pod.metadata.name or "")


def sort_daemon_pods(pods: Iterable[Pod]) -> list[Pod]:
    """Bound pods first, then oldest first, then by name."""
    return sorted(pods, key=_order)
