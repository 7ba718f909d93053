"""``pods/<name>/eviction``: a deletion that respects PodDisruptionBudgets (kube-apiserver
1.24's ``pkg/registry/core/pod/storage/eviction.go``).

A pod that is Pending, has finished or is already being deleted is deleted at once (its
disruption has happened or cannot happen). Otherwise the budgets of its namespace whose
(non-empty) selector matches it are read: more than one is a 500; with one, the eviction
is refused with 429 TooManyRequests when the budget's status is older than its spec or allows
no disruption, else the budget's ``disruptionsAllowed`` is decremented and the pod recorded in
``disruptedPods`` (so the disruption controller counts it as gone for two minutes) before the
pod is deleted with the eviction's DeleteOptions. A pod that is not Ready while the budget
is satisfied is deleted without touching the budget, on the condition that it has not changed
since it was read. ``dryRun`` (the query's or the DeleteOptions') changes nothing.

The embedded server handles one request at a time, so the budget cannot change between the
read and the write: Go's conflict retries have nothing to retry here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kcm.selectors import LabelSelector, SelectorParseError

from ..._status import StatusError, status_success
from ..._store import Obj
from .._context import Verbs
from .._subresource import Subresource

__all__ = ["MAX_DISRUPTED_PODS", "PodEviction"]

MAX_DISRUPTED_PODS = 2000
"""More entries in ``disruptedPods`` than this and evictions are refused (``MaxDisruptedPodSize``):
the disruption controller has not caught up with the evictions already approved."""

_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
_MULTIPLE = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)


def _too_many_requests(message: str, cause: str, retry_after: int) -> StatusError:
    """``errors.NewTooManyRequests`` with a ``DisruptionBudget`` cause (``Retry-After`` when
    ``retry_after`` is set)."""
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return StatusError(429, "TooManyRequests", message, details=details)


def _still_processing(name: str) -> StatusError:
    """``createTooManyRequestsError``: the budget's status is not yet for its spec."""
    return _too_many_requests(
        _VIOLATION, f"The disruption budget {name} is still being processed by the server.", 10
    )


def _delete_options(eviction: Obj, query: Mapping[str, str]) -> Obj:
    """``propagateDryRun``: the eviction's DeleteOptions with the request's dryRun.

    Raises:
        StatusError: both say dryRun and they differ (500, as Go's plain error).
    """
    options = eviction.get("deleteOptions")
    requested = [v for v in query.get("dryRun", "").split(",") if v]
    if not isinstance(options, dict):
        return {"dryRun": requested} if requested else {}
    options = copy.deepcopy(options)
    own = options.get("dryRun") or []
    if not own:
        if requested:
            options["dryRun"] = requested
        return options
    if requested and requested != own:
        raise StatusError.internal(
            f"Non-matching dry-run options in request and content: "
            f"[{' '.join(requested)}] and [{' '.join(own)}]"
        )
    return options


def _rv_unset(options: Obj) -> bool:
    return (options.get("preconditions") or {}).get("resourceVersion") is None


def _with_rv(options: Obj, pod: Obj) -> Obj:
    """The options with a resourceVersion precondition of the pod as read."""
    options = copy.deepcopy(options)
    preconditions = dict(options.get("preconditions") or {})
    preconditions["resourceVersion"] = pod["metadata"].get("resourceVersion")
    options["preconditions"] = preconditions
    return options


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _deleting(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _can_ignore_budget(pod: Obj) -> bool:
    """``canIgnorePDB``: finished, Pending, or already being deleted."""
    return _phase(pod) in ("Succeeded", "Failed", "Pending") or _deleting(pod)


def _ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or ()
    )


def _budgets_for(verbs: Verbs, ns: str, pod: Obj) -> list[Obj]:
    """``getPodDisruptionBudgets``: budgets whose selector matches the pod; a missing or empty
    selector matches nothing here (unlike the controller's)."""
    res = verbs.ctx.registry.by_storage("policy", "poddisruptionbudgets")
    if res is None:
        return []
    labels = pod["metadata"].get("labels") or {}
    found = []
    for pdb in verbs.ctx.store.items(res.storage_key, ns):
        try:
            selector = LabelSelector.from_model((pdb.get("spec") or {}).get("selector"))
        except SelectorParseError:
            continue
        if selector.empty or not selector.matches(labels):
            continue
        found.append(pdb)
    return found


def _set_insufficient(status: Obj, now: str) -> None:
    """``UpdateDisruptionAllowedCondition`` with no disruptions left."""
    conditions = list(status.get("conditions") or [])
    wanted = {
        "type": "DisruptionAllowed",
        "status": "False",
        "observedGeneration": status.get("observedGeneration"),
        "lastTransitionTime": now,
        "reason": "InsufficientPods",
        "message": "",
    }
    if wanted["observedGeneration"] is None:
        del wanted["observedGeneration"]
    for i, c in enumerate(conditions):
        if c.get("type") == "DisruptionAllowed":
            if c.get("status") == "False" and c.get("lastTransitionTime"):
                wanted["lastTransitionTime"] = c["lastTransitionTime"]
            conditions[i] = wanted
            break
    else:
        conditions.append(wanted)
    status["conditions"] = conditions


def _check_and_decrement(verbs: Verbs, pdb: Obj, pod_name: str, *, dry_run: bool) -> None:
    """``checkAndDecrement``: refuse, or take one disruption and record the pod.

    Raises:
        StatusError: 429 (status behind its spec, or no disruption allowed) or 403 (a
            negative count, or too many recorded disruptions).
    """
    name = pdb["metadata"]["name"]
    status = pdb.get("status") or {}
    if int(status.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 0):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise StatusError.forbidden(
            "policy", "poddisruptionbudget", name, "pdb disruptions allowed is negative"
        )
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise StatusError.forbidden(
            "policy",
            "poddisruptionbudget",
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        )
    if allowed == 0:
        raise _too_many_requests(
            _VIOLATION,
            f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} "
            f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently",
            0,
        )
    if dry_run:
        return
    new = copy.deepcopy(pdb)
    new_status = new.setdefault("status", {})
    new_status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        _set_insufficient(new_status, verbs.now())
    new_status["disruptedPods"] = {**(new_status.get("disruptedPods") or {}), pod_name: verbs.now()}
    res = verbs.ctx.registry.by_storage("policy", "poddisruptionbudgets")
    assert res is not None
    verbs.commit(res, new, pdb)


class PodEviction(Subresource):
    """``pods/eviction`` (``EvictionREST.Create``; see the module docstring)."""

    def post(
        self,
        verbs: Verbs,
        ns: str,
        name: str,
        body: Any,
        *,
        query: Mapping[str, str] | None = None,
    ) -> Obj:
        eviction = body if isinstance(body, dict) else {}
        if (eviction.get("metadata") or {}).get("name", "") != name:
            raise StatusError.bad_request("name in URL does not match name in Eviction object")
        options = _delete_options(eviction, query or {})
        pods = self.strategy.resource
        pod = verbs.existing(pods, ns, name)
        if _can_ignore_budget(pod):
            delete_options = options
            enforce = _phase(pod) not in ("Succeeded", "Failed") and not _deleting(pod)
            if enforce and _rv_unset(options):
                delete_options = _with_rv(options, pod)
            verbs.delete(pods, ns, name, delete_options, {})
            return status_success() | {"code": 201}
        budgets = _budgets_for(verbs, ns, pod)
        if len(budgets) > 1:
            raise StatusError.internal(_MULTIPLE)
        unready_pod = False
        budget_name = ""
        if budgets:
            pdb = budgets[0]
            budget_name = pdb["metadata"]["name"]
            status = pdb.get("status") or {}
            current = int(status.get("currentHealthy") or 0)
            desired = int(status.get("desiredHealthy") or 0)
            if not _ready(pod) and current >= desired and desired > 0:
                unready_pod = True
            else:
                _check_and_decrement(verbs, pdb, name, dry_run=bool(options.get("dryRun")))
        delete_options = _with_rv(options, pod) if unready_pod else options
        try:
            verbs.delete(pods, ns, name, delete_options, {})
        except StatusError as exc:
            if exc.code == 409 and unready_pod and _rv_unset(options):
                raise _still_processing(budget_name) from None
            raise
        return status_success() | {"code": 201}
