"""The ClusterRole aggregation controller: an aggregated ClusterRole's rules are the rules of
the ClusterRoles its selectors pick.

kube-controller-manager's ``clusterrole-aggregation`` controller
(``ClusterRoleAggregationController``). Any ClusterRole change queues every ClusterRole that
has an ``aggregationRule``; a sync collects, selector by selector, the ClusterRoles it selects
(sorted by name, itself left out) and their rules in order, each rule once, and writes them
when they differ from the role's rules, by server-side apply as the
``clusterrole-aggregation-controller`` field manager (forced), as kube's does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, final

from kcm.controllerkit import EnqueueOn, QueueController
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.meta_v1 import ObjectMeta
from kcm.models.rbac_v1 import ClusterRole, PolicyRule
from kcm.runtime import Result
from kcm.selectors import LabelSelector

__all__ = ["FIELD_MANAGER", "ClusterRoleAggregationController", "aggregated_rules"]

logger = logging.getLogger(__name__)

FIELD_MANAGER = "clusterrole-aggregation-controller"


def aggregated_rules(role: ClusterRole, roles: Iterable[ClusterRole]) -> list[PolicyRule]:
    """The rules ``role``'s aggregation rule collects from ``roles`` (kube's
    ``syncClusterRole``): per selector, the selected roles by name, each rule once."""
    selectors = role.aggregation_rule.cluster_role_selectors if role.aggregation_rule else None
    by_name = sorted(roles, key=lambda r: r.metadata.name or "")
    rules: list[PolicyRule] = []
    for model in selectors or ():
        selector = LabelSelector.from_model(model)
        for other in by_name:
            if other.metadata.name == role.metadata.name:
                continue
            if not selector.matches(other.metadata.labels or {}):
                continue
            for rule in other.rules or ():
                if rule not in rules:
                    rules.append(rule)
    return rules


@final
class ClusterRoleAggregationController(QueueController):
    """Fills in aggregated ClusterRoles (``admin``, ``edit``, ``view`` and any of yours).

    Rules are written by server-side apply. kube's controller emits no events and runs 5
    workers.

    Guarantees:
        * A role whose rules already equal the aggregation is not written.
        * A role without an ``aggregationRule`` is never written.
    """

    queue_name = "ClusterRoleAggregator"  # Go's work queue name
    default_workers = 5

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        roles = factory.informer_for(ClusterRole)
        # any ClusterRole event queues every aggregated ClusterRole (kube's ``enqueue``)
        every = EnqueueOn(self._every_aggregated, add=True, update=True, delete=True)
        self._roles = self.watch(roles, every, kind="ClusterRole")

    def _every_aggregated(self, _: ClusterRole) -> list[ObjectKey]:
        return self.aggregated_keys()

    def aggregated_keys(self) -> list[ObjectKey]:
        """The keys of every cached ClusterRole with an aggregation rule."""
        return [
            ObjectKey("", role.metadata.name or "")
            for role in self._roles.list()
            if role.aggregation_rule is not None
        ]

    async def reconcile(self, request: ObjectKey) -> Result:
        """Apply the aggregation of ClusterRole ``request.name`` when its rules differ.

        Raises:
            KcmError: the apply failed; retried with backoff.
        """
        role = self._roles.get_or_none(None, request.name)
        if role is None or role.aggregation_rule is None:
            return Result()
        rules = aggregated_rules(role, self._roles.list())
        if rules == list(role.rules or ()):
            return Result()
        applied = ClusterRole(
            metadata=ObjectMeta(name=request.name),
            rules=rules,
        )
        api: Any = self._client.api(ClusterRole)
        await api.apply(applied, field_manager=FIELD_MANAGER, force=True)
        logger.debug("aggregated %d rules into ClusterRole %s", len(rules), request.name)
        return Result()
