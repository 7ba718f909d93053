"""A stateful pod's identity: its ordinal, name, labels, hostname and claims.

Pure functions over models (Go's ``stateful_set_utils.go``). A StatefulSet's pods are
``<set>-<ordinal>``; each carries the ``statefulset.kubernetes.io/pod-name`` label, its
hostname and the set's ``serviceName`` as subdomain, the ``controller-revision-hash`` label
naming the ControllerRevision it was built from, and a volume per ``volumeClaimTemplate``
pointing at the claim ``<template>-<set>-<ordinal>``.

Kubernetes 1.24 sets no ``apps.kubernetes.io/pod-index`` label (1.28+ does): kcm follows 1.24.
"""

from __future__ import annotations

import re

import msgspec

from kcm.controllerkit import pod_name_prefix
from kcm.models.apps_v1 import StatefulSet
from kcm.models.core_v1 import (
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodSpec,
    Volume,
)
from kcm.models.meta_v1 import ObjectMeta, OwnerReference

__all__ = [
    "POD_NAME_LABEL",
    "REVISION_LABEL",
    "claim_name",
    "claims_for",
    "identity_matches",
    "is_member_of",
    "new_stateful_pod",
    "ordinal_of",
    "parent_and_ordinal",
    "pod_name",
    "pod_revision",
    "storage_matches",
    "with_identity",
    "with_revision",
    "with_storage",
]

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
"""The label holding a stateful pod's own name (``StatefulSetPodNameLabel``), so a Service can
select one pod."""

REVISION_LABEL = "controller-revision-hash"
"""The label naming the ControllerRevision a pod was built from (``StatefulSetRevisionLabel``;
its value is the revision's full name, ``<set>-<hash>``)."""

_STATEFUL_POD = re.compile(r"(.*)-([0-9]+)")
_INT32_MAX = 2**31 - 1


def parent_and_ordinal(name: str | None) -> tuple[str, int]:
    """The set name and ordinal a pod name ``<set>-<n>`` encodes (``getParentNameAndOrdinal``):
    ``("", -1)`` for another name, ``(set, -1)`` when ``n`` does not fit in 32 bits."""
    match = _STATEFUL_POD.fullmatch(name or "")
    if match is None:
        return "", -1
    ordinal = int(match.group(2))
    return match.group(1), ordinal if ordinal <= _INT32_MAX else -1


def ordinal_of(pod: Pod) -> int:
    """The pod's ordinal, -1 if its name has none."""
    return parent_and_ordinal(pod.metadata.name)[1]


def pod_name(set_name: str, ordinal: int) -> str:
    """``<set>-<ordinal>``."""
    return f"{set_name}-{ordinal}"


def claim_name(template_name: str, set_name: str, ordinal: int) -> str:
    """``<claim template>-<set>-<ordinal>``, the claim a pod's volume points at."""
    return f"{template_name}-{set_name}-{ordinal}"


def is_member_of(sts: StatefulSet, pod: Pod) -> bool:
    """The pod's name says it is one of ``sts``'s (``isMemberOf``): only those are claimed."""
    return parent_and_ordinal(pod.metadata.name)[0] == sts.metadata.name


def pod_revision(pod: Pod) -> str:
    """The name of the revision the pod was built from ("" if unlabelled)."""
    return (pod.metadata.labels or {}).get(REVISION_LABEL, "")


def identity_matches(sts: StatefulSet, pod: Pod) -> bool:
    """The pod's name, namespace and pod-name label are those of its ordinal in ``sts``
    (``identityMatches``)."""
    parent, ordinal = parent_and_ordinal(pod.metadata.name)
    name = str(sts.metadata.name)
    return (
        ordinal >= 0
        and parent == name
        and pod.metadata.name == pod_name(name, ordinal)
        and pod.metadata.namespace == sts.metadata.namespace
        and (pod.metadata.labels or {}).get(POD_NAME_LABEL) == pod.metadata.name
    )


def storage_matches(sts: StatefulSet, pod: Pod) -> bool:
    """Every claim template has a volume of its name pointing at the pod's claim
    (``storageMatches``)."""
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    volumes = {v.name: v for v in (pod.spec.volumes if pod.spec else None) or ()}
    for template in _claim_templates(sts):
        name = str(template.metadata.name)
        volume = volumes.get(name)
        source = volume.persistent_volume_claim if volume is not None else None
        if source is None or source.claim_name != claim_name(name, str(sts.metadata.name), ordinal):
            return False
    return True


def claims_for(sts: StatefulSet, ordinal: int) -> list[PersistentVolumeClaim]:
    """The claims the pod of ``ordinal`` needs, in template order
    (``getPersistentVolumeClaims``): each template renamed, in the set's namespace, its labels
    plus the set's ``selector.matchLabels``."""
    set_name = str(sts.metadata.name)
    selector = sts.spec.selector if sts.spec else None
    match_labels = dict((selector.match_labels if selector else None) or {})
    claims = []
    for template in _claim_templates(sts):
        meta = template.metadata
        labels = {**(meta.labels or {}), **match_labels}
        claims.append(
            msgspec.structs.replace(
                template,
                metadata=msgspec.structs.replace(
                    meta,
                    name=claim_name(str(meta.name), set_name, ordinal),
                    namespace=sts.metadata.namespace,
                    labels=labels or None,
                ),
            )
        )
    return claims


def with_identity(sts: StatefulSet, pod: Pod) -> Pod:
    """The pod renamed for its ordinal, in the set's namespace, with the pod-name label
    (``updateIdentity``)."""
    name = pod_name(str(sts.metadata.name), ordinal_of(pod))
    labels = {**(pod.metadata.labels or {}), POD_NAME_LABEL: name}
    meta = msgspec.structs.replace(
        pod.metadata, name=name, namespace=sts.metadata.namespace, labels=labels
    )
    return msgspec.structs.replace(pod, metadata=meta)


def with_storage(sts: StatefulSet, pod: Pod) -> Pod:
    """The pod with a volume per claim template pointing at its claim, replacing volumes of the
    same names and keeping the others after them (``updateStorage``; Go's order among the
    claim volumes is a map's, kcm's the templates')."""
    claims = {
        str(t.metadata.name): c
        for t, c in zip(_claim_templates(sts), claims_for(sts, ordinal_of(pod)), strict=True)
    }
    volumes = [
        Volume(
            name=name,
            persistent_volume_claim=PersistentVolumeClaimVolumeSource(
                claim_name=claim.metadata.name
            ),
        )
        for name, claim in claims.items()
    ]
    spec = pod.spec or PodSpec()
    volumes += [v for v in spec.volumes or () if v.name not in claims]
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(spec, volumes=volumes or None))


def with_revision(pod: Pod, revision: str) -> Pod:
    """The pod labelled with the revision it is built from (``setPodRevision``)."""
    labels = {**(pod.metadata.labels or {}), REVISION_LABEL: revision}
    return msgspec.structs.replace(
        pod, metadata=msgspec.structs.replace(pod.metadata, labels=labels)
    )


def new_stateful_pod(sts: StatefulSet, ordinal: int, controller_ref: OwnerReference) -> Pod:
    """The pod of ``ordinal`` as ``sts``'s template describes it (``newStatefulSetPod``): the
    template's labels, annotations, finalizers and spec, ``generateName`` and the controller
    reference as for any owner's pod, then its identity (name, pod-name label, hostname,
    subdomain) and storage."""
    template = sts.spec.template if sts.spec else None
    meta = (template.metadata if template else None) or ObjectMeta()
    spec = (template.spec if template else None) or PodSpec()
    name = pod_name(str(sts.metadata.name), ordinal)
    pod = Pod(
        metadata=ObjectMeta(
            name=name,
            generate_name=pod_name_prefix(str(sts.metadata.name)),
            labels=dict(meta.labels or {}),
            annotations=dict(meta.annotations) if meta.annotations else None,
            finalizers=list(meta.finalizers) if meta.finalizers else None,
            owner_references=[controller_ref],
        ),
        spec=msgspec.structs.replace(
            spec, hostname=name, subdomain=(sts.spec.service_name if sts.spec else None) or None
        ),
    )
    return with_storage(sts, with_identity(sts, pod))


def _claim_templates(sts: StatefulSet) -> list[PersistentVolumeClaim]:
    return list((sts.spec.volume_claim_templates if sts.spec else None) or ())
