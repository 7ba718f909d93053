"""PersistentVolumeClaims: defaults (``volumeMode: Filesystem``, phase Pending), access modes
and a storage request, and a spec fixed once created (a bound claim may only grow its
storage request). Claim templates of StatefulSets get the same defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kcm.models import parse_quantity

from ..._field_errors import Cause, forbidden, invalid, not_supported, required
from ..._store import Obj, deep_copy
from .._base import Strategy
from .._context import Context
from .._spec_diff import spec_diff

__all__ = ["PersistentVolumeClaimStrategy", "default_claim"]

_ACCESS_MODES: Final = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce"]
_VOLUME_MODES: Final = ["Block", "Filesystem"]
_IMMUTABLE_SPEC: Final = (
    "spec is immutable after creation except resources.requests for bound claims"
)


def default_claim(claim: Any) -> None:
    """``SetDefaults_PersistentVolumeClaim`` and ``..ClaimSpec``."""
    if not isinstance(claim, dict):
        return
    spec = claim.get("spec")
    if not isinstance(spec, dict):
        spec = claim["spec"] = {}
    spec.setdefault("volumeMode", "Filesystem")
    status = claim.get("status")
    if not isinstance(status, dict):
        status = claim["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Pending"


class PersistentVolumeClaimStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/persistentvolumeclaim``."""

    def default(self, obj: Obj) -> None:
        default_claim(obj)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        obj.pop("status", None)
        super().prepare_for_create(obj, ctx)

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + _validate_spec(obj.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return self.validate_metadata_update(new, old) + self.validate(new) + _spec_update(new, old)


def _validate_spec(spec: Mapping[str, Any]) -> list[Cause]:
    """The claim rules of ``ValidatePersistentVolumeClaimSpec`` kcm checks."""
    causes: list[Cause] = []
    modes = spec.get("accessModes") or []
    if not modes:
        causes.append(required("spec.accessModes", "at least 1 access mode is required"))
    causes += [
        not_supported("spec.accessModes", m, [*_ACCESS_MODES, "ReadWriteOncePod"])
        for m in modes
        if m not in (*_ACCESS_MODES, "ReadWriteOncePod")
    ]
    if "ReadWriteOncePod" in modes and any(m in _ACCESS_MODES for m in modes):
        causes.append(
            forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes")
        )
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        causes.append(required("spec.resources[storage]"))
    else:
        try:
            amount = parse_quantity(storage)
        except ValueError:
            amount = None
        if amount is not None and amount <= 0:
            causes.append(invalid("spec.resources[storage]", storage, "must be greater than zero"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        causes.append(not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    return causes


def _spec_update(new: Obj, old: Obj) -> list[Cause]:
    """Only a bound claim's storage request may change (and not shrink); the volume name may
    be set once (what changed follows the message, see :mod:`.._spec_diff`)."""
    spec, before = deep_copy(new.get("spec") or {}), deep_copy(old.get("spec") or {})
    if not before.get("volumeName"):
        before["volumeName"] = spec.get("volumeName")
        if before["volumeName"] is None:
            before.pop("volumeName")
    old_storage = ((before.get("resources") or {}).get("requests") or {}).get("storage")
    new_storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    bound = (new.get("status") or {}).get("phase") == "Bound"
    if bound and (spec.get("resources") or {}).get("requests") is not None:
        spec["resources"]["requests"]["storage"] = old_storage
    causes: list[Cause] = []
    if spec != before:
        diff = "\n".join(spec_diff(before, spec))
        causes.append(forbidden("spec", f"{_IMMUTABLE_SPEC}\n{diff}\n"))
    if old_storage is not None and new_storage is not None:
        try:
            shrinks = parse_quantity(new_storage) < parse_quantity(old_storage)
        except ValueError:
            shrinks = False
        if shrinks:
            causes.append(
                forbidden(
                    "spec.resources.requests.storage", "field can not be less than previous value"
                )
            )
    return causes
