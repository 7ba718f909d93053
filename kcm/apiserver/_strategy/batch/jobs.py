"""Jobs: defaults, a selector generated from the uid, and a pod template that never restarts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause, not_supported
from ..._store import Obj
from .._base import Strategy
from .._context import Context
from .._immutable import immutable_selector
from ..core.podspec import RESTART_POLICIES, validate_pod_spec

__all__ = ["JobStrategy", "validate_job_template"]


class JobStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/batch/job`` (defaults and validation)."""

    manages_generation = True

    template_restart_policy = "Never"

    def validate(self, obj: Obj) -> list[Cause]:
        spec = obj.get("spec")
        template = spec.get("template") if isinstance(spec, Mapping) else None
        return super().validate(obj) + validate_job_template(template, "spec.template")

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return super().validate_update(new, old) + immutable_selector(new, old)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        if not spec.get("manualSelector"):
            _generate_selector(obj["metadata"], spec)


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
