"""What the apps workloads share: a selector that matches the pod template's labels, a pod
template that restarts Always, a selector that never changes, and non-negative replicas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kcm.selectors import LabelSelector, SelectorParseError

from ..._field_errors import Cause, go_label_selector, go_value, invalid, not_supported, required
from ..._object_meta import validate_labels
from ..._store import Obj
from .._base import Strategy
from .._immutable import immutable_selector
from ..core.podspec import RESTART_POLICIES, validate_pod_spec

__all__ = ["WorkloadStrategy"]


class WorkloadStrategy(Strategy):
    """The validation of Deployments, ReplicaSets, DaemonSets and StatefulSets."""

    manages_generation = True

    selector_owner: ClassVar[str] = "deployment"
    """Who an empty selector "is invalid for" in the message (kube's words, per kind)."""

    has_replicas: ClassVar[bool] = True

    def validate(self, obj: Obj) -> list[Cause]:
        return self.validate_metadata(obj) + self.validate_spec(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        """``ValidateXUpdate``: ObjectMetaUpdate and the spec; the selector never changes."""
        return (
            self.validate_metadata_update(new, old)
            + self.validate_spec(new)
            + immutable_selector(new, old)
        )

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """The kind's spec: replicas, a selector that matches the template, the template."""
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            spec = {}
        causes: list[Cause] = []
        replicas = spec.get("replicas")
        if self.has_replicas and isinstance(replicas, int) and replicas < 0:
            causes.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
        selector, selector_causes = _validate_selector(spec.get("selector"), self.selector_owner)
        causes += selector_causes
        template = spec.get("template")
        if not isinstance(template, Mapping):
            causes.append(required("spec.template"))
        else:
            causes += _validate_template(template, selector)
        return causes


def _validate_selector(raw: Any, owner: str) -> tuple[LabelSelector, list[Cause]]:
    """The parsed ``spec.selector`` (or one that selects nothing) and its field errors."""
    selector = LabelSelector.nothing()
    if raw is None:
        return selector, [required("spec.selector")]
    if not isinstance(raw, Mapping):
        return selector, [invalid("spec.selector", raw, "invalid label selector")]
    causes: list[Cause] = []
    try:
        selector = LabelSelector.from_model(raw)
    except SelectorParseError as exc:
        causes.append(invalid("spec.selector", raw, str(exc)))
    if not raw.get("matchLabels") and not raw.get("matchExpressions"):
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": f"Invalid value: {go_label_selector(raw)}: "
                f"empty selector is invalid for {owner}",
                "field": "spec.selector",
            }
        )
    return selector, causes


def _validate_template(template: Mapping[str, Any], selector: LabelSelector) -> list[Cause]:
    causes: list[Cause] = []
    tmeta = template.get("metadata") or {}
    labels = tmeta.get("labels") if isinstance(tmeta, Mapping) else None
    if not selector.empty and not selector.matches(labels if isinstance(labels, Mapping) else {}):
        bad = go_value(labels) if labels else "map[string]string(nil)"
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": f"Invalid value: {bad}: `selector` does not match template `labels`",
                "field": "spec.template.metadata.labels",
            }
        )
    if labels:
        causes.extend(validate_labels(labels, "spec.template.metadata.labels"))
    tspec = template.get("spec")
    causes.extend(validate_pod_spec(tspec, "spec.template.spec"))
    if isinstance(tspec, Mapping):
        policy = tspec.get("restartPolicy")
        if policy is not None and policy != "Always" and policy in RESTART_POLICIES:
            causes.append(not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    return causes
