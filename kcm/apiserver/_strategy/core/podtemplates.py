"""PodTemplates: the template's pod spec is checked as a pod's."""

from __future__ import annotations

from collections.abc import Mapping

from ..._field_errors import Cause
from ..._store import Obj
from .._base import Strategy
from .podspec import validate_pod_spec

__all__ = ["PodTemplateStrategy"]


class PodTemplateStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/podtemplate`` (its validation)."""

    manages_generation = True

    def validate(self, obj: Obj) -> list[Cause]:
        template = obj.get("template")
        tspec = template.get("spec") if isinstance(template, Mapping) else None
        return super().validate(obj) + validate_pod_spec(tspec, "template.spec")
