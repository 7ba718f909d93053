"""Access reviews (``SelfSubjectAccessReview``, ``SubjectAccessReview``,
``LocalSubjectAccessReview``): a create that is answered, never stored.

kube-apiserver's ``pkg/registry/authorization/*subjectaccessreview``: the spec is validated
(exactly one of ``resourceAttributes`` and ``nonResourceAttributes``; a user or group to check
for the non-self reviews; empty metadata), then the authorizer decides for the requester (self
reviews) or for the spec's user and groups, and the object comes back with ``status``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..._field_errors import Cause, invalid
from ..._rbac import Attributes, authorize
from ..._requester import Requester
from ..._status import StatusError
from ..._store import Obj
from .._base import Strategy
from .._context import Context

__all__ = ["AccessReviewStrategy"]


def _attributes(spec: dict[str, Any]) -> Attributes:
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return Attributes(
            verb=str(resource.get("verb") or ""),
            namespace=str(resource.get("namespace") or ""),
            group=str(resource.get("group") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            name=str(resource.get("name") or ""),
        )
    other = spec.get("nonResourceAttributes") or {}
    return Attributes(verb=str(other.get("verb") or ""), path=str(other.get("path") or "/"))


def _meta_is_empty(meta: dict[str, Any], allowed: tuple[str, ...]) -> bool:
    return all(v in (None, "", {}, []) for k, v in meta.items() if k not in allowed)


class AccessReviewStrategy(Strategy):
    """The three access reviews; :attr:`self_review` and :attr:`namespaced` tell them apart."""

    answers_create: ClassVar[bool] = True

    @property
    def self_review(self) -> bool:
        return self.resource.kind == "SelfSubjectAccessReview"

    def _causes(self, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        resource, other = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        causes: list[Cause] = []
        if resource is not None and other is not None:
            causes.append(
                invalid(
                    "spec.nonResourceAttributes",
                    other,
                    "cannot be specified in combination with resourceAttributes",
                )
            )
        if resource is None and other is None:
            causes.append(
                invalid(
                    "spec.resourceAttributes",
                    None,
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )
            )
        if not self.self_review and not spec.get("user") and not spec.get("groups"):
            causes.append(
                invalid(
                    "spec.user",
                    spec.get("user") or "",
                    "at least one of user or group must be specified",
                )
            )
        meta = obj.get("metadata") or {}
        local = self.resource.namespaced
        allowed = ("managedFields", "namespace") if local else ("managedFields",)
        if not _meta_is_empty(meta, allowed):
            detail = "must be empty except for namespace" if local else "must be empty"
            causes.append(invalid("metadata", meta, detail))
        if (
            local
            and isinstance(resource, dict)
            and resource.get("namespace") != meta.get("namespace")
        ):
            causes.append(
                invalid(
                    "spec.resourceAttributes.namespace",
                    resource.get("namespace") or "",
                    "must match metadata.namespace",
                )
            )
        if local and other is not None:
            causes.append(
                invalid("spec.nonResourceAttributes", other, "disallowed on this kind of request")
            )
        return causes

    def answer(self, obj: Obj, who: Requester, ctx: Context) -> Obj:
        causes = self._causes(obj)
        if causes:
            raise _invalid(self.resource.group, causes)
        spec = obj.get("spec") or {}
        if not self.self_review:
            groups = tuple(str(g) for g in spec.get("groups") or ())
            who = Requester(str(spec.get("user") or ""), groups)
        allowed, reason = authorize(ctx.store, who, _attributes(spec))
        status: dict[str, Any] = {"allowed": allowed}
        if reason:
            status["reason"] = reason
        obj["status"] = status
        obj["metadata"].setdefault("creationTimestamp", None)
        return obj


def _invalid(group: str, causes: list[Cause]) -> StatusError:
    """kube's 422 for a review: the kind is empty by then (``.authorization.k8s.io ""``)."""
    texts = [f"{c['field']}: {c['message']}" for c in causes]
    text = texts[0] if len(texts) == 1 else f"[{', '.join(texts)}]"
    details = {"group": group, "causes": [dict(c) for c in causes]}
    return StatusError(422, "Invalid", f'.{group} "" is invalid: {text}', details=details)
