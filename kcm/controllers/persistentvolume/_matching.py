"""Which PersistentVolume a claim gets: kube's ``findBestMatchForClaim`` (volumes grouped by
their access modes, the groups with the fewest modes first) and ``FindMatchingVolume`` (a
volume pre-bound to the claim wins; otherwise the smallest Available one of the claim's class,
volume mode and selector that is big enough), and ``checkVolumeSatisfyClaim`` for a claim that
names its volume."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal

from kcm.controllerkit import claim_class, is_volume_bound_to_claim, volume_class
from kcm.models import parse_quantity
from kcm.models.core_v1 import PersistentVolume, PersistentVolumeClaim
from kcm.selectors import LabelSelector, SelectorParseError

__all__ = [
    "find_best_match",
    "requested_storage",
    "volume_capacity",
    "volume_mode_mismatch",
    "why_volume_does_not_satisfy",
]

_FILESYSTEM = "Filesystem"


def requested_storage(claim: PersistentVolumeClaim) -> Decimal:
    """The claim's ``resources.requests.storage`` (0 when missing)."""
    resources = claim.spec.resources if claim.spec else None
    value = ((resources.requests if resources else None) or {}).get("storage")
    return parse_quantity(value) if value is not None else Decimal(0)


def volume_capacity(volume: PersistentVolume) -> Decimal:
    """The volume's ``capacity.storage`` (0 when missing)."""
    value = ((volume.spec.capacity if volume.spec else None) or {}).get("storage")
    return parse_quantity(value) if value is not None else Decimal(0)


def volume_mode_mismatch(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """The claim and the volume differ in ``volumeMode`` (unset is Filesystem)."""
    wanted = (claim.spec.volume_mode if claim.spec else None) or _FILESYSTEM
    return wanted != ((volume.spec.volume_mode if volume.spec else None) or _FILESYSTEM)


def _modes(volume: PersistentVolume) -> frozenset[str]:
    return frozenset((volume.spec.access_modes if volume.spec else None) or ())


def _claim_modes(claim: PersistentVolumeClaim) -> frozenset[str]:
    return frozenset((claim.spec.access_modes if claim.spec else None) or ())


def why_volume_does_not_satisfy(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> str | None:
    """Why the volume a claim names cannot be bound to it (kube's text), or None."""
    if volume.metadata.deletion_timestamp is not None:
        return f'the volume is marked for deletion "{volume.metadata.name}"'
    if volume_capacity(volume) < requested_storage(claim):
        return "requested PV is too small"
    if volume_class(volume) != claim_class(claim):
        return "storageClassName does not match"
    if volume_mode_mismatch(claim, volume):
        return "incompatible volumeMode"
    if not _claim_modes(claim) <= _modes(volume):
        return "incompatible accessMode"
    return None


def _selector(claim: PersistentVolumeClaim) -> LabelSelector | None:
    model = claim.spec.selector if claim.spec else None
    if model is None:
        return None
    try:
        return LabelSelector.from_model(model)
    except SelectorParseError:
        return None  # unreachable for a validated claim


def _match_in_group(
    claim: PersistentVolumeClaim, volumes: Sequence[PersistentVolume], delay_binding: bool
) -> PersistentVolume | None:
    requested = requested_storage(claim)
    wanted_class = claim_class(claim)
    selector = _selector(claim)
    smallest: PersistentVolume | None = None
    smallest_size = Decimal(0)
    for volume in volumes:
        bound_here = is_volume_bound_to_claim(volume, claim)
        if volume.spec is not None and volume.spec.claim_ref is not None and not bound_here:
            continue
        size = volume_capacity(volume)
        if size < requested or volume_mode_mismatch(claim, volume):
            continue
        if volume.metadata.deletion_timestamp is not None:
            continue
        if bound_here:
            return volume
        if delay_binding:
            continue  # the scheduler binds it, on the node it picks
        if (volume.status.phase if volume.status else None) != "Available":
            continue
        if selector is not None and not selector.matches(volume.metadata.labels):
            continue
        if volume_class(volume) != wanted_class:
            continue
        if smallest is None or size < smallest_size:
            smallest, smallest_size = volume, size
    return smallest


def find_best_match(
    claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume], *, delay_binding: bool
) -> PersistentVolume | None:
    """The volume to bind ``claim`` to, or None.

    Volumes are grouped by their exact set of access modes; only groups with every mode the
    claim asks for are searched, those with the fewest modes first (then by name, where kube's
    order is a map's), and within a group a volume pre-bound to the claim wins over the
    smallest fitting Available one. Under ``delay_binding`` (WaitForFirstConsumer) only a
    pre-bound volume is taken."""
    wanted = _claim_modes(claim)
    groups: dict[frozenset[str], list[PersistentVolume]] = {}
    for volume in volumes:
        groups.setdefault(_modes(volume), []).append(volume)
    for modes in sorted(groups, key=lambda m: (len(m), sorted(m))):
        if not wanted <= modes:
            continue
        found = _match_in_group(claim, groups[modes], delay_binding)
        if found is not None:
            return found
    return None
