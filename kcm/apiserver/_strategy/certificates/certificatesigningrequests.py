"""CertificateSigningRequests: the requester is recorded, the request never changes, and each
write path changes only its part of the status.

kube-apiserver's ``pkg/registry/certificates/certificates``: a create records who asked
(``spec.username``, ``uid``, ``groups``, ``extra``) and starts with an empty status; an update of
the object itself changes metadata only; ``/status`` (the signer's) sets the certificate and
conditions other than Approved/Denied; ``/approval`` (``kubectl certificate approve``, an
approver) sets Approved/Denied conditions only. Conditions get their ``lastUpdateTime`` and
``lastTransitionTime`` from the server when a write leaves them out.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..._field_errors import Cause
from ..._names import path_segment
from ..._requester import Requester
from ..._store import Obj, deep_copy
from .._base import Strategy
from .._subresource import Subresource
from .csr_validation import validate_csr, validate_csr_update

__all__ = ["CertificateSigningRequestStrategy"]


def _conditions(obj: Obj) -> list[Any]:
    status = obj.get("status")
    found = status.get("conditions") if isinstance(status, dict) else None
    return found if isinstance(found, list) else []


def _stamp_conditions(new: Obj, old: Obj, now: str) -> None:
    """kube's ``populateConditionTimestamps``: a condition without times is updated now and
    transitioned now, unless ``old`` had it with the same status."""
    for condition in _conditions(new):
        if not isinstance(condition, dict):
            continue
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            since = now
            for before in _conditions(old):
                if (
                    isinstance(before, dict)
                    and before.get("type") == condition.get("type")
                    and before.get("status") == condition.get("status")
                    and before.get("lastTransitionTime")
                ):
                    since = before["lastTransitionTime"]
                    break
            condition["lastTransitionTime"] = since


def _with_spec_of(new: Obj, old: Obj) -> Obj:
    merged = deep_copy(new)
    if "spec" in old:
        merged["spec"] = deep_copy(old["spec"])
    else:
        merged.pop("spec", None)
    return merged


class _Status(Subresource):
    """``/status`` (``csrStatusStrategy``): the signer's certificate and its conditions; the
    Approved and Denied conditions stay as they were."""

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        merged = _with_spec_of(new, old)
        kept = [c for c in _conditions(merged) if isinstance(c, dict)]
        for kind in ("Approved", "Denied"):
            before = [c for c in _conditions(old) if c.get("type") == kind]
            slots = [i for i, c in enumerate(kept) if c.get("type") == kind]
            if len(before) == len(slots):
                for slot, condition in zip(slots, before, strict=True):
                    kept[slot] = deep_copy(condition)
        if kept:
            merged.setdefault("status", {})["conditions"] = kept
        return merged

    def stamp_update(self, new: Obj, old: Obj, now: str) -> None:
        _stamp_conditions(new, old, now)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return self.strategy.validate_metadata_update(new, old) + validate_csr_update(
            new, old, certificate=True
        )


class _Approval(Subresource):
    """``/approval`` (``csrApprovalStrategy``): the conditions, nothing else."""

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        merged = deep_copy(old)
        merged["metadata"] = deep_copy(new.get("metadata") or {})
        conditions = _conditions(new)
        status = {k: v for k, v in (old.get("status") or {}).items() if k != "conditions"}
        if conditions:
            status["conditions"] = [deep_copy(c) for c in conditions if isinstance(c, dict)]
        if status:
            merged["status"] = status
        else:
            merged.pop("status", None)
        return merged

    def stamp_update(self, new: Obj, old: Obj, now: str) -> None:
        _stamp_conditions(new, old, now)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return self.strategy.validate_metadata_update(new, old) + validate_csr_update(
            new, old, approval=True
        )


class CertificateSigningRequestStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/certificates/certificates``."""

    status_zero: ClassVar[Obj | None] = {}
    """Go writes the empty status struct: a new request has ``status: {}``."""

    @staticmethod
    def name_rule(name: str) -> list[str]:
        return path_segment(name)

    def stamp_creator(self, obj: Obj, who: Requester) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
        if who.name:
            spec["username"] = who.name
        if who.uid:
            spec["uid"] = who.uid
        if who.groups:
            spec["groups"] = list(who.groups)
        if who.extra:
            spec["extra"] = {k: list(v) for k, v in who.extra}

    def validate(self, obj: Obj) -> list[Cause]:
        return self.validate_metadata(obj) + validate_csr(obj)

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        merged = _with_spec_of(new, old)
        if "status" in old:
            merged["status"] = deep_copy(old["status"])
        else:
            merged.pop("status", None)
        return merged

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return self.validate_metadata_update(new, old) + validate_csr_update(new, old)

    def reset_fields(self, subresource: str) -> tuple[tuple[str, ...], ...]:
        if subresource == "status":
            return (("f:spec",), ("f:status", "f:conditions"))
        if subresource == "approval":
            return (("f:spec",), ("f:status", "f:certificate"))
        return (("f:spec",), ("f:status",))

    def subresource(self, name: str) -> Subresource:
        if name == "status":
            return _Status(self)
        if name == "approval":
            return _Approval(self)
        return super().subresource(name)
