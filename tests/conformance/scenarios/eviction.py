"""``pods/NAME/eviction`` against PodDisruptionBudgets (kube-apiserver's ``EvictionREST``).

No controller runs: each budget's status is written by hand through ``/status``, so what is
compared is the eviction API's decision alone (the budget and the pod afterwards)."""

from __future__ import annotations

from typing import Any

from ..scenario import Http, Scenario

CORE = "/api/v1/namespaces/$ns"
POLICY = "/apis/policy/v1/namespaces/$ns"
LABELS = {"app": "web"}
MERGE = "merge"
BUDGET_KEEP = ("metadata.generation", "status")


def _pod(name: str, *, node: str | None = "node-1") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "labels": LABELS}, "spec": spec}


def _eviction(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}, **extra}


def _running(name: str, *, ready: bool = True) -> Http:
    """The kubelet's part: Running, and Ready or not."""
    return Http(
        "PATCH",
        f"{CORE}/pods/{name}/status",
        {
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            }
        },
        content_type=MERGE,
        keep=("status.phase",),
    )


def _budget(name: str = "pdb", selector: dict[str, Any] | None = None) -> Http:
    return Http(
        "POST",
        f"{POLICY}/poddisruptionbudgets",
        {
            "metadata": {"name": name},
            "spec": {
                "minAvailable": 2,
                "selector": {"matchLabels": LABELS} if selector is None else selector,
            },
        },
        keep=("metadata.generation",),
    )


def _status(
    allowed: int, *, current: int = 3, desired: int = 2, name: str = "pdb", generation: int = 1
) -> Http:
    """The disruption controller's part, by hand."""
    return Http(
        "PATCH",
        f"{POLICY}/poddisruptionbudgets/{name}/status",
        {
            "status": {
                "observedGeneration": generation,
                "disruptionsAllowed": allowed,
                "currentHealthy": current,
                "desiredHealthy": desired,
                "expectedPods": 3,
                "conditions": [
                    {
                        "type": "DisruptionAllowed",
                        "status": "True" if allowed else "False",
                        "reason": "SufficientPods" if allowed else "InsufficientPods",
                        "message": "",
                        "observedGeneration": generation,
                        "lastTransitionTime": "2024-01-01T00:00:00Z",
                    }
                ],
            }
        },
        content_type=MERGE,
        keep=("status.disruptionsAllowed",),
    )


def _evict(name: str = "p", **kwargs: Any) -> Http:
    body = kwargs.pop("body", None) or _eviction(name)
    return Http("POST", f"{CORE}/pods/{name}/eviction", body, **kwargs)


_GET_BUDGET = Http("GET", f"{POLICY}/poddisruptionbudgets/pdb", keep=BUDGET_KEEP)
_POD_DELETING = Http("GET", f"{CORE}/pods/p", keep=("metadata.deletionGracePeriodSeconds",))
_RUNNING_POD = (Http("POST", f"{CORE}/pods", _pod("p"), keep=("kind",)), _running("p"))


SCENARIOS = (
    Scenario(
        "eviction/budget-allows-one",
        (
            *_RUNNING_POD,
            _budget(),
            _status(1),
            _evict(response_headers=("retry-after",)),
            _GET_BUDGET,
            _POD_DELETING,
        ),
        "a budget that allows one disruption: 201; disruptionsAllowed 0 (condition False "
        "InsufficientPods), the pod in disruptedPods, the pod deleted gracefully",
    ),
    Scenario(
        "eviction/budget-exhausted-429",
        (
            *_RUNNING_POD,
            _budget(),
            _status(0, current=2),
            _evict(response_headers=("retry-after",)),
            _GET_BUDGET,
            _POD_DELETING,
        ),
        "no disruption allowed: 429 TooManyRequests with the DisruptionBudget cause, no "
        "Retry-After; nothing changes",
    ),
    Scenario(
        "eviction/budget-behind-spec-429",
        (
            *_RUNNING_POD,
            _budget(),
            _status(1),
            Http(
                "PATCH",
                f"{POLICY}/poddisruptionbudgets/pdb",
                {"spec": {"minAvailable": 1}},
                content_type=MERGE,
                keep=("metadata.generation",),
            ),
            _evict(response_headers=("retry-after",)),
            _GET_BUDGET,
        ),
        "a budget whose status is older than its spec: 429 with Retry-After 10 and 'still "
        "being processed'",
    ),
    Scenario(
        "eviction/two-budgets-500",
        (
            *_RUNNING_POD,
            _budget(),
            _budget("second"),
            _evict(response_headers=("retry-after",)),
        ),
        "a pod two budgets select: 500 (the eviction subresource does not support it)",
    ),
    Scenario(
        "eviction/pending-pod-ignores-budget",
        (
            Http("POST", f"{CORE}/pods", _pod("p", node=None), keep=("kind",)),
            _budget(),
            _status(0),
            _evict(),
            Http("GET", f"{CORE}/pods/p"),
            _GET_BUDGET,
        ),
        "a Pending pod is deleted without a budget check: 201, gone, the budget untouched",
    ),
    Scenario(
        "eviction/deleting-pod-ignores-budget",
        (
            *_RUNNING_POD,
            Http("DELETE", f"{CORE}/pods/p", keep=("metadata.deletionGracePeriodSeconds",)),
            _budget(),
            _status(0),
            _evict(),
            _GET_BUDGET,
        ),
        "a pod already being deleted is deleted again without a budget check",
    ),
    Scenario(
        "eviction/dry-run",
        (
            *_RUNNING_POD,
            _budget(),
            _status(1),
            _evict(query={"dryRun": "All"}),
            _GET_BUDGET,
            _POD_DELETING,
        ),
        "dryRun=All: 201 and nothing changes, neither the budget nor the pod",
    ),
    Scenario(
        "eviction/dry-run-mismatch-500",
        (
            *_RUNNING_POD,
            _evict(query={"dryRun": "All"}, body=_eviction("p", deleteOptions={"dryRun": ["x"]})),
        ),
        "dryRun in the query and another in the DeleteOptions: 500",
    ),
    Scenario(
        "eviction/name-mismatch-400",
        (*_RUNNING_POD, _evict(body=_eviction("other"))),
        "an Eviction naming another pod: 400",
    ),
    Scenario(
        "eviction/unready-pod-budget-met",
        (
            Http("POST", f"{CORE}/pods", _pod("p"), keep=("kind",)),
            _running("p", ready=False),
            _budget(),
            _status(0, current=2),
            _evict(),
            _GET_BUDGET,
            _POD_DELETING,
        ),
        "an unready pod while the budget is met: deleted without taking a disruption",
    ),
    Scenario(
        "eviction/empty-selector-budget-ignored",
        (*_RUNNING_POD, _budget(selector={}), _status(0), _evict(), _GET_BUDGET),
        "a budget with an empty selector covers no pod for evictions: 201",
    ),
    Scenario(
        "eviction/no-budget",
        (*_RUNNING_POD, _evict(), _POD_DELETING),
        "a Running pod no budget selects: 201, deleted gracefully",
    ),
    Scenario(
        "eviction/grace-period-from-options",
        (
            *_RUNNING_POD,
            _evict(body=_eviction("p", deleteOptions={"gracePeriodSeconds": 7})),
            _POD_DELETING,
        ),
        "the Eviction's DeleteOptions are the delete's: grace period 7",
    ),
)
