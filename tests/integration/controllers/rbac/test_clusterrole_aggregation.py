"""The ClusterRole aggregation controller against the embedded API server."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.clusterroleaggregation import (
    FIELD_MANAGER,
    ClusterRoleAggregationController,
    aggregated_rules,
)
from kcm.informers import SharedInformerFactory
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.models.rbac_v1 import AggregationRule, ClusterRole, PolicyRule
from kcm.testing import eventually
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio

LABEL = "example.com/aggregate-to-monitoring"
READ_PODS = PolicyRule(api_groups=[""], resources=["pods"], verbs=["get", "list"])
READ_NODES = PolicyRule(api_groups=[""], resources=["nodes"], verbs=["get"])
METRICS = PolicyRule(non_resource_urls=["/metrics"], verbs=["get"])


def aggregator(client: ApiClient, factory: SharedInformerFactory) -> Any:
    return ClusterRoleAggregationController(client, factory)


def aggregated(name: str, *labels: str) -> ClusterRole:
    selectors = [LabelSelector(match_labels={label: "true"}) for label in labels]
    return ClusterRole(
        metadata=ObjectMeta(name=name),
        aggregation_rule=AggregationRule(cluster_role_selectors=selectors),
    )


def source(name: str, *rules: PolicyRule, label: str = LABEL) -> ClusterRole:
    return ClusterRole(metadata=ObjectMeta(name=name, labels={label: "true"}), rules=list(rules))


def test_rules_are_collected_by_selector_then_name_each_once() -> None:
    role = aggregated("m", LABEL, "other")
    roles = [
        source("b", READ_NODES, READ_PODS),
        source("a", READ_PODS),
        source("c", METRICS, label="other"),
        source("m", METRICS),  # itself: left out
        ClusterRole(metadata=ObjectMeta(name="unlabelled"), rules=[METRICS]),
    ]
    assert aggregated_rules(role, roles) == [READ_PODS, READ_NODES, METRICS]


async def test_an_aggregated_role_follows_the_roles_it_selects(api_server: ApiServer) -> None:
    async with running(api_server, aggregator) as env:
        roles = env.client.api(ClusterRole)
        await roles.create(aggregated("monitoring", LABEL))
        await roles.create(source("pods", READ_PODS))
        await roles.create(source("nodes", READ_NODES, READ_PODS))

        async def rules_are(expected: list[PolicyRule]) -> bool:
            return list((await roles.get("monitoring")).rules or []) == expected

        await eventually(lambda: rules_are([READ_NODES, READ_PODS]))
        got = await roles.get("monitoring")
        managers = {m.manager for m in got.metadata.managed_fields or []}
        assert FIELD_MANAGER in managers
        pods = await roles.get("pods")
        await roles.update(pods, msgspec.structs.replace(pods, rules=[METRICS]))
        await eventually(lambda: rules_are([READ_NODES, READ_PODS, METRICS]))
        await roles.delete("nodes")
        await eventually(lambda: rules_are([METRICS]))
        await env.quiesce()
        # roles without an aggregation rule are never written by the controller
        assert env.tap.count("PATCH", "/clusterroles/pods") == 1  # the test's own update
        assert env.tap.count("PATCH", "/clusterroles/nodes") == 0


async def test_the_bootstrap_admin_edit_and_view_are_filled_in() -> None:
    async with ApiServer(token="t") as server, running(server, aggregator) as env:
        roles = env.client.api(ClusterRole)

        async def filled() -> bool:
            return all([(await roles.get(n)).rules for n in ("admin", "edit", "view")])

        await eventually(filled)
        view = (await roles.get("view")).rules or []
        assert (
            PolicyRule(
                api_groups=[""],
                resources=[
                    "configmaps",
                    "endpoints",
                    "persistentvolumeclaims",
                    "persistentvolumeclaims/status",
                    "pods",
                    "replicationcontrollers",
                    "replicationcontrollers/scale",
                    "serviceaccounts",
                    "services",
                    "services/status",
                ],
                verbs=["get", "list", "watch"],
            )
            in view
        )
        edit, admin = (await roles.get("edit")).rules or [], (await roles.get("admin")).rules or []
        assert set(map(repr, view)) < set(map(repr, edit)) < set(map(repr, admin))
