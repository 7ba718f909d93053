"""Quota evaluation shared by the API server's ResourceQuota admission and the
``resourcequota`` controller (kube's ``pkg/quota/v1``): what an object uses of a quota, a
namespace's usage, and whether a write fits.

Pure functions over JSON-shaped objects (the dicts the API server stores); only
``kcm.models`` and ``kcm.selectors`` below it, so both the server and controllers use it.
"""

from __future__ import annotations

from ._admission import QuotaExceeded as QuotaExceeded
from ._admission import charge as charge
from ._evaluators import IGNORED_RESOURCES as IGNORED_RESOURCES
from ._evaluators import Evaluator as Evaluator
from ._evaluators import PersistentVolumeClaimEvaluator as PersistentVolumeClaimEvaluator
from ._evaluators import PodEvaluator as PodEvaluator
from ._evaluators import ServiceEvaluator as ServiceEvaluator
from ._evaluators import count_name as count_name
from ._evaluators import counts_against_quota as counts_against_quota
from ._evaluators import counts_for_quota as counts_for_quota
from ._evaluators import evaluator_for as evaluator_for
from ._evaluators import evaluators_for_quota as evaluators_for_quota
from ._evaluators import is_best_effort as is_best_effort
from ._evaluators import object_count_evaluator as object_count_evaluator
from ._evaluators import quota_service_type as quota_service_type
from ._evaluators import scope_requirements as scope_requirements
from ._quantity import Quantity as Quantity
from ._quantity import go_quantity_text as go_quantity_text
from ._resource_list import ResourceList as ResourceList
from ._resource_list import pretty_print as pretty_print
from ._resource_list import resource_list as resource_list
from ._resource_list import to_json as to_json
from ._usage import ListObjects as ListObjects
from ._usage import calculate_usage as calculate_usage
from ._usage import next_status as next_status

__all__ = [
    "IGNORED_RESOURCES",
    "Evaluator",
    "ListObjects",
    "PersistentVolumeClaimEvaluator",
    "PodEvaluator",
    "Quantity",
    "QuotaExceeded",
    "ResourceList",
    "ServiceEvaluator",
    "calculate_usage",
    "charge",
    "count_name",
    "counts_against_quota",
    "counts_for_quota",
    "evaluator_for",
    "evaluators_for_quota",
    "go_quantity_text",
    "is_best_effort",
    "next_status",
    "object_count_evaluator",
    "pretty_print",
    "quota_service_type",
    "resource_list",
    "scope_requirements",
    "to_json",
]
