"""kube-apiserver's bootstrap RBAC policy, created and reconciled on start.

The roles and bindings of ``_bootstrap_policy.json`` (recorded from kube-apiserver 1.24 by
``scripts/record_bootstrap_policy.py``): cluster-admin, admin, edit and view (the last three
aggregated from ``system:aggregate-to-*`` by their labels), system:basic-user,
system:discovery, system:public-info-viewer, system:node-proxier and the other ``system:*``
roles, and a ``system:controller:<name>`` role and binding for every kube-controller-manager
controller, with their bindings.

Reconciled as kube's ``rbac/bootstrap-roles`` hook does on every start: a missing object is
created; one annotated ``rbac.authorization.kubernetes.io/autoupdate: "false"`` is left as it
is; any other gets the labels and annotations it lacks (its own values win), the rules and
aggregation selectors it lacks (extra ones are kept) or, for a binding, the subjects it lacks
(a binding whose roleRef changed is deleted and created again).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from ._rest import Rest
from ._store import Obj

__all__ = ["reconcile_bootstrap_policy"]

_RBAC = "rbac.authorization.k8s.io"
_AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
_MANAGER = "kube-apiserver"


@cache
def _policy() -> dict[str, list[Obj]]:
    data: dict[str, list[Obj]] = json.loads(
        (Path(__file__).parent / "_bootstrap_policy.json").read_text()
    )
    return data


def reconcile_bootstrap_policy(rest: Rest) -> None:
    """Create or reconcile every bootstrap role and binding."""
    for plural, objects in _policy().items():
        res = rest.registry.lookup(_RBAC, "v1", plural)
        assert res is not None
        for expected in objects:
            meta = expected["metadata"]
            namespace, name = meta.get("namespace", ""), meta["name"]
            existing = rest.store.get(res.storage_key, namespace, name)
            body = {"apiVersion": f"{_RBAC}/v1", "kind": res.kind, **copy.deepcopy(expected)}
            if existing is None:
                rest.create(res, namespace or None, body, {}, manager=_MANAGER)
                continue
            if (existing["metadata"].get("annotations") or {}).get(_AUTOUPDATE) == "false":
                continue
            if "roleRef" in expected and existing.get("roleRef") != expected["roleRef"]:
                rest.delete(res, namespace, name, {}, {})
                rest.create(res, namespace or None, body, {}, manager=_MANAGER)
                continue
            reconciled = _reconciled(existing, expected)
            if reconciled is not None:
                rest.update(res, namespace, name, reconciled, {}, manager=_MANAGER)


def _reconciled(existing: Obj, expected: Obj) -> Obj | None:
    """``existing`` with what it lacks of ``expected``; None when it lacks nothing."""
    result = copy.deepcopy(existing)
    meta = result["metadata"]
    for key in ("labels", "annotations"):
        merged = {**(expected["metadata"].get(key) or {}), **(meta.get(key) or {})}
        if merged:
            meta[key] = merged
    for key in ("rules", "subjects"):
        have: list[Any] = list(result.get(key) or [])
        missing = [item for item in expected.get(key) or [] if item not in have]
        if missing:
            result[key] = have + missing
    wanted = (expected.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    if wanted:
        rule = result.setdefault("aggregationRule", {})
        have_selectors: list[Any] = list(rule.get("clusterRoleSelectors") or [])
        rule["clusterRoleSelectors"] = have_selectors + [
            s for s in wanted if s not in have_selectors
        ]
    return None if result == existing else result
