"""The namespace controller's condition messages (kube's wording)."""

from __future__ import annotations

from kcm.controllers.namespace import CONDITION_TYPES
from kcm.controllers.namespace._controller import _Outcome


def test_success_reports_no_failures() -> None:
    assert _Outcome().failures() == {}
    assert CONDITION_TYPES == (
        "NamespaceDeletionDiscoveryFailure",
        "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure",
        "NamespaceContentRemaining",
        "NamespaceFinalizersRemaining",
    )


def test_remaining_content_and_finalizers_are_counted_and_sorted() -> None:
    outcome = _Outcome(
        remaining={"pods.": 2, "widgets.example.com": 1},
        finalizers={"example.com/x": 1, "a.io/b": 3},
    )
    failures = outcome.failures()
    assert failures["NamespaceContentRemaining"] == (
        "Some resources are remaining: pods. has 2 resource instances, "
        "widgets.example.com has 1 resource instances"
    )
    assert failures["NamespaceFinalizersRemaining"] == (
        "Some content in the namespace has finalizers remaining: a.io/b in 3 resource "
        "instances, example.com/x in 1 resource instances"
    )
    assert set(failures) == {"NamespaceContentRemaining", "NamespaceFinalizersRemaining"}


def test_discovery_and_content_errors_are_counted() -> None:
    outcome = _Outcome(discovery_errors=["x.io/v1: 503"], content_errors=["b", "a"])
    failures = outcome.failures()
    assert failures["NamespaceDeletionDiscoveryFailure"] == (
        "Discovery failed for some groups, 1 failing: x.io/v1: 503"
    )
    assert failures["NamespaceDeletionContentFailure"] == (
        "Failed to delete all resource types, 2 remaining: a, b"
    )
