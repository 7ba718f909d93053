"""``/scale``: an autoscaling/v1 Scale view of any kind with a replica count.

The kind's strategy says where the replicas live (:class:`ScalePaths`: ``spec.replicas`` and
``status.replicas`` for the built-ins; a CRD's ``specReplicasPath`` and friends). Writing a
Scale sets the replicas on the whole object, which is then updated as the main resource.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from .._names import dns1123_subdomain
from .._object_meta import validate_object_meta
from .._status import StatusError
from .._store import Obj, deep_copy
from ._subresource import Subresource

if TYPE_CHECKING:
    from ._base import Strategy

__all__ = ["ScalePaths", "ScaleSubresource"]


class ScalePaths(NamedTuple):
    """Dotted paths of the desired and observed replicas, and of a selector string ("": none)."""

    spec_replicas: str = "spec.replicas"
    status_replicas: str = "status.replicas"
    label_selector: str = ""


class ScaleSubresource(Subresource):
    """``<kind>/scale``: GET and PUT/PATCH speak autoscaling/v1 Scale."""

    view: ClassVar[bool] = True

    validates_scale: ClassVar[bool] = True
    """Whether the Scale is validated here (``ValidateScale``: its metadata, a negative
    ``spec.replicas``); a custom resource's is not, its own validation refuses bad replicas."""

    def __init__(self, strategy: Strategy, paths: ScalePaths) -> None:
        super().__init__(strategy)
        self.paths = paths

    def read(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        selector = self._selector(obj)
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": meta["name"],
                "namespace": meta.get("namespace", ""),
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
                "creationTimestamp": meta.get("creationTimestamp"),
            },
            "spec": {"replicas": int(_dig(obj, self.paths.spec_replicas) or 0)},
            "status": {
                "replicas": int(_dig(obj, self.paths.status_replicas) or 0),
                **({"selector": selector} if selector else {}),  # omitempty
            },
        }

    def write(self, old: Obj, body: Any, name: str) -> Obj:
        """The object with the Scale's replicas, after ``ValidateScale`` (the Scale's own
        metadata: it must name its namespace, which the path does not fill in)."""
        res = self.strategy.resource
        if not isinstance(body, dict):
            raise StatusError.bad_request("the body of the request must be a Scale object")
        replicas = (body.get("spec") or {}).get("replicas")
        causes = (
            validate_object_meta(body, name_rule=dns1123_subdomain, namespaced=res.namespaced)
            if self.validates_scale
            else []
        )
        if not isinstance(replicas, int) or (replicas < 0 and self.validates_scale):
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "message": f"Invalid value: {replicas!r}: must be greater than or equal to 0",
                    "field": "spec.replicas",
                }
            )
        if causes:
            raise StatusError.invalid("autoscaling", "Scale", old["metadata"]["name"], causes)
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"].get("resourceVersion"):
            raise StatusError.stale(res.group, res.plural, name)
        new = deep_copy(old)
        _set(new, self.paths.spec_replicas, replicas)
        return new

    def missing(self, name: str, *, write: bool) -> StatusError:
        """kube's scale storage names itself (``deployments/scale.apps``) where its Get or
        Update does (the RC's Get even says ``autoscaling``)."""
        res = self.strategy.resource
        found = _MISSING_WRITE if write else _MISSING_GET
        group = found.get((res.group, res.plural))
        if group is None:
            return super().missing(name, write=write)
        return StatusError.not_found(group, f"{res.plural}/scale", name)

    def _selector(self, obj: Obj) -> str:
        if self.paths.label_selector:
            return str(_dig(obj, self.paths.label_selector) or "")
        sel = (obj.get("spec") or {}).get("selector") or {}
        if not isinstance(sel, dict):
            return ""
        return _selector_string(sel)


# (group, plural) -> the group kube's 404 for <plural>/scale of a missing object names.
_MISSING_GET: dict[tuple[str, str], str] = {
    ("apps", "deployments"): "apps",
    ("apps", "replicasets"): "apps",
    ("", "replicationcontrollers"): "autoscaling",
}
_MISSING_WRITE: dict[tuple[str, str], str] = {
    ("apps", "deployments"): "apps",
    ("apps", "replicasets"): "apps",
    ("apps", "statefulsets"): "apps",
    ("", "replicationcontrollers"): "",
}


def _selector_string(sel: Obj) -> str:
    """A ``metav1.LabelSelector`` in the label-selector string syntax (``a=b,c in (d)``)."""
    labels = sel.get("matchLabels", sel if "matchLabels" not in sel else {})
    parts = [f"{k}={v}" for k, v in sorted(labels.items()) if isinstance(v, str)]
    for expr in sel.get("matchExpressions") or []:
        op = expr.get("operator")
        vals = ",".join(expr.get("values") or [])
        key = expr.get("key")
        if op == "In":
            parts.append(f"{key} in ({vals})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({vals})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def _dig(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _set(obj: Obj, path: str, value: Any) -> None:
    parts = path.split(".")
    cur = obj
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value
