"""CronJobs: short names, a schedule, and a job template validated and defaulted as a Job's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause, required
from ..._names import dns1123_subdomain
from ..._store import Obj
from .._base import Strategy, zero_template_meta
from .jobs import validate_job_template

__all__ = ["CronJobStrategy"]

_MAX_NAME_LENGTH = 52
"""A CronJob's name plus the 11 characters of a scheduled Job's suffix must fit in 63."""


class CronJobStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/batch/cronjob`` (defaults and validation)."""

    manages_generation = True
    status_zero = {}

    def default(self, obj: Obj) -> None:
        """``SetDefaults_CronJob``."""
        super().default(obj)
        spec = obj.setdefault("spec", {})
        if not spec.get("concurrencyPolicy"):
            spec["concurrencyPolicy"] = "Allow"
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)

    def canonicalize(self, obj: Obj) -> None:
        super().canonicalize(obj)
        zero_template_meta((obj.get("spec") or {}).get("jobTemplate"))

    @staticmethod
    def name_rule(name: str) -> list[str]:
        errs = dns1123_subdomain(name)
        if len(name) > _MAX_NAME_LENGTH:
            errs.append(f"must be no more than {_MAX_NAME_LENGTH} characters")
        return errs

    def validate(self, obj: Obj) -> list[Cause]:
        spec = _mapping(obj.get("spec"))
        causes = [] if spec.get("schedule") else [required("spec.schedule")]
        job_spec = _mapping(_mapping(spec.get("jobTemplate")).get("spec"))
        causes += validate_job_template(job_spec.get("template"), "spec.jobTemplate.spec.template")
        return super().validate(obj) + causes

    def pod_template(self, obj: Obj) -> Any:
        """``spec.jobTemplate.spec.template``."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return None
        job_template = spec.get("jobTemplate")
        job_spec = job_template.get("spec") if isinstance(job_template, dict) else None
        return job_spec.get("template") if isinstance(job_spec, dict) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
