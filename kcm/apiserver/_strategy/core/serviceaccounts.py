"""ServiceAccounts: ``serviceaccounts/NAME/token`` issues a signed token (``TokenREST``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ..._field_errors import Cause, invalid
from ..._status import StatusError
from ..._store import Obj
from ..._tokens import ISSUER
from .._base import Strategy
from .._context import Verbs
from .._subresource import Subresource

__all__ = ["ServiceAccountStrategy"]

_API_VERSION = "authentication.k8s.io/v1"
_DEFAULT_SECONDS = 3600
_MIN_SECONDS = 600
_MAX_SECONDS = 1 << 32
_KUBELET_SECONDS = 3607
"""What the kubelet asks for a projected token: kube extends it to a year, warning after it."""
_EXTENDED_SECONDS = 365 * 24 * 3600


class ServiceAccountStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/serviceaccount``."""

    def subresource(self, name: str) -> Subresource:
        if name == "token":
            return _Token(self)
        return super().subresource(name)


class _Token(Subresource):
    """POST ``serviceaccounts/NAME/token``: the TokenRequest back (201) with ``status.token``
    and ``status.expirationTimestamp``; audiences default to the server's, the lifetime to an
    hour; a ``boundObjectRef`` (a Pod or Secret) must exist and, for a pod, run as this
    ServiceAccount."""

    def post(
        self,
        verbs: Verbs,
        ns: str,
        name: str,
        body: Any,
        *,
        query: Mapping[str, str] | None = None,
    ) -> Obj:
        request: Obj = dict(body) if isinstance(body, dict) else {}
        spec = dict(request.get("spec") or {})
        seconds = spec.get("expirationSeconds")
        seconds = _DEFAULT_SECONDS if seconds is None else seconds
        causes = _validate(seconds)
        if causes:
            raise StatusError.invalid("authentication.k8s.io", "TokenRequest", "", causes)
        account = verbs.existing(self.strategy.resource, ns, name)
        ref = spec.get("boundObjectRef")
        bound = _bound_object(verbs, ns, name, ref) if ref else None
        audiences = list(spec.get("audiences") or [ISSUER])
        lifetime, warn_after = seconds, 0
        if bound is not None and "pod" in bound and seconds == _KUBELET_SECONDS:
            lifetime, warn_after = _EXTENDED_SECONDS, seconds
        token = verbs.ctx.tokens.issue(
            namespace=ns,
            service_account=account,
            audiences=audiences,
            seconds=lifetime,
            bound=bound,
            warn_after=warn_after,
        )
        expires = verbs.ctx.clock.now() + timedelta(seconds=seconds)
        meta = dict(request.get("metadata") or {})
        meta.setdefault("creationTimestamp", None)
        return {
            "kind": "TokenRequest",
            "apiVersion": _API_VERSION,
            "metadata": meta,
            "spec": {
                "audiences": audiences,
                "expirationSeconds": seconds,
                "boundObjectRef": ref or None,
            },
            "status": {
                "token": token,
                "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
        }


def _validate(seconds: Any) -> list[Cause]:
    """``ValidateTokenRequest``: between ten minutes and 2^32 seconds."""
    field = "spec.expirationSeconds"
    if isinstance(seconds, int) and seconds < _MIN_SECONDS:
        return [invalid(field, seconds, "may not specify a duration less than 10 minutes")]
    if isinstance(seconds, int) and seconds > _MAX_SECONDS:
        return [invalid(field, seconds, "may not specify a duration larger than 2^32 seconds")]
    return []


def _bound_object(verbs: Verbs, ns: str, name: str, ref: Any) -> dict[str, dict[str, str]]:
    """The ``kubernetes.io`` claim of the object a token is bound to (checked as kube does)."""
    ref = ref if isinstance(ref, dict) else {}
    api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    plural = {"Pod": "pods", "Secret": "secrets"}.get(kind) if group == "" else None
    resource = verbs.ctx.registry.lookup("", "v1", plural) if plural else None
    if resource is None:
        version = api_version.rpartition("/")[2]
        gvk = f"{group}/{version}, Kind={kind}"
        raise StatusError.bad_request(f"cannot bind token to object of type {gvk}")
    obj = verbs.existing(resource, ns, ref.get("name") or "")
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName") != name:
        raise StatusError.bad_request(
            f'cannot bind token for serviceaccount "{name}" to pod running with different '
            "serviceaccount name."
        )
    uid = obj["metadata"].get("uid", "")
    if ref.get("uid") and ref["uid"] != uid:
        raise StatusError.conflict(
            "",
            kind,
            ref.get("name") or "",
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    return {kind.lower(): {"name": obj["metadata"]["name"], "uid": uid}}
