"""SelfSubjectRulesReview: what the requester may do in a namespace (``kubectl auth can-i
--list``), answered, never stored (kube's ``selfsubjectrulesreview.REST``).

The rules are RBAC's for the requester in ``spec.namespace`` (cluster role bindings and that
namespace's role bindings), split as kube splits them: a rule's resources make a resource
rule, its nonResourceURLs a non-resource rule. A binding whose role is missing makes the
answer ``incomplete`` with the error in ``evaluationError``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..._rbac import rules_for
from ..._requester import Requester
from ..._status import StatusError
from ..._store import Obj
from .._base import Strategy
from .._context import Context

__all__ = ["RulesReviewStrategy"]


class RulesReviewStrategy(Strategy):
    """Answers a SelfSubjectRulesReview for the requester."""

    answers_create: ClassVar[bool] = True

    def answer(self, obj: Obj, who: Requester, ctx: Context) -> Obj:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        namespace = str(spec.get("namespace") or "")
        if not namespace:
            raise StatusError.bad_request("no namespace on request")
        rules, error = rules_for(ctx.store, who, namespace)
        resource_rules: list[dict[str, Any]] = []
        non_resource_rules: list[dict[str, Any]] = []
        for rule in rules:
            if rule.get("resources"):
                resource_rule = {"verbs": rule.get("verbs") or []}
                for key in ("apiGroups", "resources", "resourceNames"):
                    if rule.get(key):
                        resource_rule[key] = rule[key]
                resource_rules.append(resource_rule)
            if rule.get("nonResourceURLs"):
                non_resource_rules.append(
                    {"verbs": rule.get("verbs") or [], "nonResourceURLs": rule["nonResourceURLs"]}
                )
        status: dict[str, Any] = {
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource_rules,
            "incomplete": bool(error),
        }
        if error:
            status["evaluationError"] = error
        obj["status"] = status
        obj["metadata"].setdefault("creationTimestamp", None)
        return obj
