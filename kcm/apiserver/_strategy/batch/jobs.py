"""Jobs: defaults, a selector generated from the uid, labels from the pod template, and a
template that never restarts and never changes.

The generated selector and template labels are those of Kubernetes 1.27 and later
(``batch.kubernetes.io/controller-uid`` selects, both label sets are on the template), not
1.24's (``controller-uid`` only): that is what users' clusters do today, and kcm's Job
controller selects pods with them (a difference kept on purpose, see
``tests/conformance/differences.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause, go_value, invalid_shown, not_supported
from ..._store import Obj
from .._base import Strategy
from .._context import Context
from .._immutable import immutable_selector
from ..core.podspec import RESTART_POLICIES, validate_pod_spec

__all__ = ["JobStrategy", "validate_job_template"]


class JobStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/batch/job`` (defaults and validation)."""

    manages_generation = True
    status_zero = {}
    status_omitempty = ("active", "succeeded", "failed")

    def canonicalize(self, obj: Obj) -> None:
        """Also what Go leaves out of a Job's status: an empty ``completedIndexes`` and the
        empty lists of ``uncountedTerminatedPods`` (``omitempty``; read back from protobuf
        storage, an empty list is none)."""
        super().canonicalize(obj)
        status = obj.get("status")
        if not isinstance(status, dict):
            return
        if status.get("completedIndexes") == "":
            del status["completedIndexes"]
        uncounted = status.get("uncountedTerminatedPods")
        if isinstance(uncounted, dict):
            for key in ("succeeded", "failed"):
                if uncounted.get(key) == []:
                    del uncounted[key]

    def validate(self, obj: Obj) -> list[Cause]:
        spec = obj.get("spec")
        template = spec.get("template") if isinstance(spec, Mapping) else None
        return super().validate(obj) + validate_job_template(template, "spec.template")

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        """``ValidateJob`` and ``ValidateJobUpdate``: completions, the selector, the template
        and the completion mode never change."""
        causes = self.validate(new) + self.validate_metadata_update(new, old)
        spec: Mapping[str, Any] = new.get("spec") or {}
        before: Mapping[str, Any] = old.get("spec") or {}
        for field in ("completions", "completionMode"):
            if spec.get(field) != before.get(field):
                shown = "null" if spec.get(field) is None else go_value(spec.get(field))
                causes.append(invalid_shown(f"spec.{field}", shown, "field is immutable"))
        causes += immutable_selector(new, old)
        if spec.get("template") != before.get("template"):
            shown = go_value(spec.get("template"))
            causes.append(invalid_shown("spec.template", shown, "field is immutable"))
        return causes

    def default(self, obj: Obj) -> None:
        """``SetDefaults_Job``: one completion at a time, six retries, labels from the
        template."""
        super().default(obj)
        spec = obj.setdefault("spec", {})
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        _labels_from_template(obj)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        had_labels = bool(obj["metadata"].get("labels"))
        super().prepare_for_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        if not spec.get("manualSelector"):
            _generate_selector(obj["metadata"], spec)
        if not had_labels:
            # Go's defaulting makes a Job without labels share its template's label map, so
            # the labels the generated selector adds to the template are the Job's too.
            obj["metadata"].pop("labels", None)
        _labels_from_template(obj)


def _labels_from_template(obj: Obj) -> None:
    """A Job without labels takes its pod template's."""
    template = (obj.get("spec") or {}).get("template") or {}
    labels = (template.get("metadata") or {}).get("labels")
    if labels and not obj["metadata"].get("labels"):
        obj["metadata"]["labels"] = dict(labels)


def _generate_selector(meta: Obj, spec: Obj) -> None:
    """kube-apiserver selects a Job's pods by its uid and labels the template to match."""
    generated = {
        "batch.kubernetes.io/controller-uid": meta["uid"],
        "batch.kubernetes.io/job-name": meta["name"],
        "controller-uid": meta["uid"],
        "job-name": meta["name"],
    }
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": meta["uid"]}}
    template = spec.setdefault("template", {})
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**(tmeta.get("labels") or {}), **generated}


def validate_job_template(template: Any, field: str) -> list[Cause]:
    """A Job's pod template: a valid pod spec whose restartPolicy is OnFailure or Never.

    kube-apiserver defaults an empty restartPolicy to Always before validating, so a Job
    without one is refused as ``Unsupported value: "Always"``; this does the same.
    """
    tspec = template.get("spec") if isinstance(template, Mapping) else None
    causes = validate_pod_spec(tspec, f"{field}.spec")
    policy = (tspec.get("restartPolicy") if isinstance(tspec, Mapping) else None) or "Always"
    if policy not in ("OnFailure", "Never") and policy in RESTART_POLICIES:
        causes.append(not_supported(f"{field}.spec.restartPolicy", policy, ["OnFailure", "Never"]))
    return causes
